"""Flags and plumbing shared by `audit` and `sweep` (instancetype_webhook/fleet/)."""
from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any, TypeVar

from instancetype_webhook.cli.inputs import InputError, add_release_argument, release_option
from instancetype_webhook.settings import POLICIES

T = TypeVar("T")


def add_selection(p: argparse.ArgumentParser) -> None:
    src = p.add_mutually_exclusive_group()
    src.add_argument("--kubeconfig", help="kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
    src.add_argument("--in-cluster", action="store_true", help="use the pod's service account")
    scope = p.add_mutually_exclusive_group()
    scope.add_argument("-n", "--namespace", help="only this namespace (default: the kubeconfig context's)")
    scope.add_argument("-A", "--all-namespaces", action="store_true", help="every namespace")
    p.add_argument("--policy", choices=POLICIES, default="expandAll", help="policy to decide by (default expandAll)")
    p.add_argument("--allow-vm-policy", action="store_true",
                   help="honour the VM annotation instancetype-webhook.kubevirt.io/policy (as serve --allow-vm-policy)")
    p.add_argument("--no-provenance", dest="provenance", action="store_false",
                   help="no expanded-from annotation (as serve --no-provenance)")
    p.add_argument("--preserve-guest", action="store_true", help="as serve --preserve-guest")
    p.add_argument("--kubevirt", metavar="NAMESPACE/NAME",
                   help="the KubeVirt CR whose configuration decides (as serve --kubevirt; default: the one found)")
    add_release_argument(p, default=None, shown="auto: the KubeVirt CR's")
    p.add_argument("--shard", help="I/N: only the VMs whose stable hash falls in shard I of N (I may be `job`: "
                                   "the Indexed Job's JOB_COMPLETION_INDEX)")
    p.add_argument("--page-size", type=int, default=500, help="LIST page size (limit), default 500")
    p.add_argument("--sync-timeout", type=float, default=60.0, help="seconds to list the instance types")
    p.add_argument("-o", "--output", choices=("table", "json", "yaml"), default="table")
    p.add_argument("--progress", choices=("auto", "always", "never"), default="auto",
                   help="progress bar on stderr (auto: only on a terminal)")


def open_for(args: argparse.Namespace, command: str) -> tuple[Any, Any, Any] | int:
    """(session, namespace or None for all, shard), or an exit status after printing why."""
    from instancetype_webhook.fleet.selection import Shard
    from instancetype_webhook.fleet.session import SessionError, open_session

    try:  # the flag, else INSTANCETYPE_WEBHOOK_KUBEVIRT_VERSION: one line and exit 2 when it names no release
        release_option(args.kubevirt_version, default="auto")
    except InputError as exc:
        print(f"{command}: {exc}", file=sys.stderr)
        return 2
    shard = None
    if args.shard:
        try:
            shard = Shard.parse(args.shard)
        except ValueError as exc:
            print(f"{command}: {exc}", file=sys.stderr)
            return 2
    if args.page_size < 1:
        print(f"{command}: --page-size must be at least 1", file=sys.stderr)
        return 2
    try:
        session = open_session(args.kubeconfig, args.in_cluster, args.sync_timeout, args.page_size,
                               **server_settings(args))
    except SessionError as exc:
        print(f"{command}: {exc}", file=sys.stderr)
        return 2
    namespace = None if args.all_namespaces else (args.namespace or session.namespace)
    return session, namespace, shard


def server_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The serve settings these flags stand for; an unset flag leaves the INSTANCETYPE_WEBHOOK_* variable."""
    given: dict[str, Any] = {"policy": args.policy}
    for name in ("kubevirt_version", "kubevirt"):
        if getattr(args, name, None) is not None:
            given[name] = getattr(args, name)
    for flag, name, value in (("allow_vm_policy", "allow_vm_policy", True), ("provenance", "provenance", False),
                              ("preserve_guest", "preserve_guest", True)):
        if getattr(args, flag) == value:
            given[name] = value
    return given


def progress_for(args: argparse.Namespace, label: str) -> Any:
    from instancetype_webhook.fleet.progress import Progress

    return Progress(label, enabled={"auto": None, "always": True, "never": False}[args.progress])


def with_progress(args: argparse.Namespace, label: str, session: Any, work: Callable[[Any, Any], T],
                  error_prefix: str) -> T | None:
    """`work(total, tick)` under the progress bar, then the session closed; a cluster error is printed (None)."""
    from instancetype_webhook.sources.kube import KubeError

    bar = progress_for(args, label)
    try:
        return work(bar.total, bar.tick)
    except KubeError as exc:
        print(f"{error_prefix}{exc}", file=sys.stderr)
        return None
    finally:
        bar.close()
        session.close()
