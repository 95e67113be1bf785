"""`instancetype-webhook serve`: the admission webhook over HTTPS (FastAPI on uvicorn).

Every flag is also an environment variable INSTANCETYPE_WEBHOOK_<FLAG> (dashes as underscores,
e.g. INSTANCETYPE_WEBHOOK_TLS_CERT); a flag on the command line wins.
"""
from __future__ import annotations

import argparse
import os
import sys

from pydantic import ValidationError

from instancetype_webhook.cli.command import add_command
from instancetype_webhook.cli.inputs import InputError, add_release_argument, release_option
from instancetype_webhook.settings import ENV_PREFIX, POLICIES, ServerSettings


def register(subparsers: argparse._SubParsersAction) -> None:
    p = add_command(subparsers, "serve", "run the admission webhook (HTTPS)", __doc__)
    S = argparse.SUPPRESS  # unset flags fall back to the environment, then the defaults
    p.add_argument("--host", default=S, help="listen address (default 0.0.0.0)")
    p.add_argument("--port", type=int, default=S, help="HTTPS port (default 8443)")
    p.add_argument("--tls-cert", default=S, help="PEM certificate chain (reloaded when the file changes)")
    p.add_argument("--tls-key", default=S, help="PEM private key (reloaded when the file changes)")
    p.add_argument("--tls-client-ca", default=S, help="require client certificates signed by this CA")
    p.add_argument("--tls-min-version", choices=("1.2", "1.3"), default=S, help="minimum TLS version (default 1.2)")
    p.add_argument("--dev", action="store_true", default=S,
                   help="generate a throw-away self-signed certificate for localhost/127.0.0.1")
    p.add_argument("--policy", choices=POLICIES, default=S, help="reference policy (default reference)")
    p.add_argument("--allow-vm-policy", action="store_true", default=S,
                   help="let a VM's annotation instancetype-webhook.kubevirt.io/policy override the policy "
                        "(off: the annotation is ignored with a warning)")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--kubeconfig", default=S, help="live cluster through this kubeconfig file")
    src.add_argument("--in-cluster", action="store_true", default=S, help="live cluster, in-cluster configuration")
    src.add_argument("--catalog", default=S, help="directory of instance type/preference YAML files")
    p.add_argument("--kubevirt", metavar="NAMESPACE/NAME", default=S,
                   help="the KubeVirt CR whose spec.configuration is the cluster configuration (default: the one "
                        "found in any namespace; without one, KubeVirt's defaults)")
    add_release_argument(p, default=S, shown="auto: the cluster's KubeVirt CR; offline a KubeVirt object in "
                         "--catalog, else main")
    p.add_argument("--preserve-guest", action="store_true", default=S,
                   help="write the devices virt-controller auto-attaches into flattened VMs, so the guest keeps "
                        "the hardware it has with its references (a deliberate divergence from upstream's flat VM)")
    p.add_argument("--workers", type=int, default=S,
                   help="processes answering on the port (default 1); each keeps its own watch caches")
    p.add_argument("--metrics-port", type=int, default=S, help="plain-HTTP /metrics port (default 8080, 0 = off)")
    p.add_argument("--metrics-host", default=S,
                   help="/metrics listen address (default: the --host address, so 127.0.0.1 keeps both local)")
    p.add_argument("--log-level", default=S, help="debug, info, warning, error (default info)")
    p.add_argument("--log-allowed", type=int, default=S, metavar="N",
                   help="a review line for 1 in N allowed reviews that change nothing (default 100; 1: every one, "
                        "0: none; refusals, errors and patches are always logged; every review at --log-level debug)")
    p.add_argument("--max-body-bytes", type=int, default=S, help="larger request bodies get 413 (default 8 MiB)")
    p.add_argument("--review-deadline", type=float, default=S, help="seconds to answer a review (default 8)")
    p.add_argument("--deadline-action", choices=("deny", "allow"), default=S,
                   help="answer when the deadline passes: deny, or allow with a warning (default deny)")
    p.add_argument("--start-grace", type=float, default=S, metavar="SECONDS",
                   help="seconds after the start /readyz turns ready even though the reference source has not "
                        "synced (default 60; 0: at once)")
    p.add_argument("--shutdown-delay", type=float, default=S, help="seconds /readyz is false before stopping")
    p.add_argument("--no-provenance", dest="provenance", action="store_false", default=S,
                   help="do not add the expanded-from annotation to flattened VMs")
    p.add_argument("--no-resize-handwritten", dest="resize_handwritten", action="store_false", default=S,
                   help="naming an instance type on a VM written flat by hand stays upstream's conflict")
    p.set_defaults(func=run)


def settings_from(args: argparse.Namespace) -> ServerSettings:
    given = {k: v for k, v in vars(args).items() if k not in ("func", "command")}
    return ServerSettings(**given)


def print_invalid(command: str, exc: ValidationError, given: dict[str, object]) -> None:
    """One line per invalid setting, named as the user gave it: the flag, or the environment variable."""
    for err in exc.errors():
        name = "_".join(str(x) for x in err["loc"])
        where = f"--{name.replace('_', '-')}" if name in given else f"{ENV_PREFIX}{name.upper()}"
        value = "" if name in given or f"{ENV_PREFIX}{name.upper()}" not in os.environ else \
            f"={os.environ[f'{ENV_PREFIX}{name.upper()}']!r}"
        print(f"{command}: {where}{value}: {err['msg']}", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    try:  # the flag, else INSTANCETYPE_WEBHOOK_KUBEVIRT_VERSION, named in the one line when it names no release
        release_option(getattr(args, "kubevirt_version", None), default="auto")
    except InputError as exc:
        print(f"serve: {exc}", file=sys.stderr)
        return 2
    try:
        settings = settings_from(args)
    except ValidationError as exc:
        print_invalid("serve", exc, vars(args))
        return 2
    from instancetype_webhook.server.run import ServeError, serve

    try:
        return serve(settings)
    except ServeError as exc:
        print(f"serve: {exc}", file=sys.stderr)
        return 2
