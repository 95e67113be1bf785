"""`instancetype-webhook playground`: the playground page on its own, to see what the webhook would do.

    instancetype-webhook playground [-f FILE ...] [--catalog DIR | --kubeconfig FILE] [--policy POLICY]
                                    [--allow-vm-policy] [--host 127.0.0.1] [--port 8444]

Serves https://HOST:PORT/playground (a throw-away self-signed certificate, as `serve --dev`) beside the
webhook's own endpoints. Offline by default: the bundled catalogue (or --catalog DIR), plus the instance
types, preferences, ControllerRevisions and volumes found in the -f files; the VMs in those files are
offered as samples beside the bundled ones. With --kubeconfig the references come from that cluster,
read through the same watch caches as `serve` (nothing is ever written to the cluster). It listens on
127.0.0.1 unless --host says otherwise.

Exit status: 0 after Ctrl-C, 2 on a bad argument or unreadable file.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from instancetype_webhook.cli.command import add_command
from instancetype_webhook.cli.inputs import InputError, add_release_argument, release_option
from instancetype_webhook.settings import POLICIES, ServerSettings


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = add_command(subparsers, "playground", "serve the playground page: what the webhook would do to a VM", __doc__)
    p.add_argument("--host", default="127.0.0.1", help="listen address (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=8444, help="HTTPS port (default 8444)")
    p.add_argument("-f", "--filename", action="append", default=[], metavar="FILE",
                   help="VMs (offered as samples) and reference objects (added to the catalogue); offline only")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--catalog", metavar="DIR", help="use the manifests under DIR instead of the bundled catalogue")
    src.add_argument("--kubeconfig", metavar="FILE", help="read the references from this cluster (read-only)")
    p.add_argument("--kubevirt", metavar="NAMESPACE/NAME", help="the KubeVirt CR (with --kubeconfig)")
    add_release_argument(p, default=None, shown="auto: with --kubeconfig the cluster's KubeVirt CR, offline main")
    p.add_argument("--policy", choices=POLICIES, help="the server's policy (default: INSTANCETYPE_WEBHOOK_POLICY, "
                                                     "else reference)")
    p.add_argument("--allow-vm-policy", action="store_true", default=None,
                   help="let the VM's annotation instancetype-webhook.kubevirt.io/policy choose the policy")
    p.add_argument("--log-level", default="warning", help="debug, info, warning, error (default warning)")
    p.set_defaults(func=run)


def samples_and_objects(paths: list[str], version: str = "main") -> tuple[list[Any], list[dict[str, Any]]]:
    """The -f files' VMs as samples (after the bundled ones) and their reference objects (as release `version`
    stores them)."""
    from instancetype_webhook.cli.inputs import read_inputs
    from instancetype_webhook.playground.routes import Sample, bundled_samples
    from instancetype_webhook.playground.yamlpos import dump

    inputs = read_inputs(paths).as_release(version)
    samples = bundled_samples()
    for origin, docs in inputs.files:
        vms = [doc for doc in docs if doc.get("kind") == "VirtualMachine"]
        for index, vm in enumerate(vms):
            name = Path(origin).stem + (f"-{index + 1}" if len(vms) > 1 else "")
            text = Path(origin).read_text(encoding="utf-8") if len(docs) == 1 else dump(vm)
            samples.append(Sample(name, f"{origin}", text))
    return samples, inputs.reference_objects


def run(args: argparse.Namespace) -> int:
    from instancetype_webhook.playground.routes import Playground
    from instancetype_webhook.server.run import ServeError, serve
    from instancetype_webhook.sources.catalog import CatalogError

    if args.filename and args.kubeconfig:
        print("playground: -f files are added to the offline catalogue; give them without --kubeconfig",
              file=sys.stderr)
        return 2
    try:  # the flag, else INSTANCETYPE_WEBHOOK_KUBEVIRT_VERSION, named in the one line when it names no release
        release_option(args.kubevirt_version, default="auto")
    except InputError as exc:
        print(f"playground: {exc}", file=sys.stderr)
        return 2
    # what is not given on the command line comes from the INSTANCETYPE_WEBHOOK_* environment, as for serve
    given = {"host": args.host, "port": args.port, "dev": True, "metrics_port": 0, "log_level": args.log_level,
             "shutdown_delay": 0}
    given.update({k: getattr(args, k) for k in ("catalog", "kubeconfig", "kubevirt", "kubevirt_version", "policy",
                                                 "allow_vm_policy") if getattr(args, k) is not None})
    try:
        settings = ServerSettings(**given)
    except ValidationError as exc:
        from instancetype_webhook.cli.serve import print_invalid

        print_invalid("playground", exc, {k: v for k, v in given.items() if k not in ("dev", "metrics_port")})
        return 2
    try:
        samples, objects = samples_and_objects(args.filename, settings.kubevirt_version)
    except (InputError, CatalogError, OSError) as exc:
        print(f"playground: {exc}", file=sys.stderr)
        return 2
    def listening(port: int) -> None:  # once the port is ours: a taken port is one line, never this one
        print(f"playground: https://{args.host}:{port}/playground (self-signed certificate; Ctrl-C stops)",
              flush=True)

    try:
        return serve(settings, Playground(samples, objects), on_listening=listening)
    except ServeError as exc:
        print(f"playground: {exc}", file=sys.stderr)
        return 2
