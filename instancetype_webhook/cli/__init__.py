"""The `instancetype-webhook` console script: one module per subcommand, each with `register(subparsers)`.

Exit status common to every command: 3 when a live source (the cluster's API server) could not answer in time
(`kubevirt.source.SourceUnavailable`: retry once it answers); each command documents its own 0, 1 and 2."""
from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import sys

from instancetype_webhook.compiled import build_summary
from instancetype_webhook.kubevirt.source import SourceUnavailable

# Each name is a module instancetype_webhook.cli.<name> exposing register(subparsers) that sets `func` on its parser;
# func(args) returns the exit status.
COMMANDS = ("expand", "validate", "conformance", "domxml", "serve", "certs", "audit", "sweep", "resize", "plan",
            "playground", "fn")


class VersionAction(argparse.Action):
    """--version: the installed version and the build (pure Python, or compiled with mypyc)."""

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        print(f"{parser.prog} {version()} ({build_summary()})")
        parser.exit()


def version() -> str:
    try:
        return importlib.metadata.version("instancetype-webhook")
    except importlib.metadata.PackageNotFoundError:  # run from a source tree that is not installed
        return "unknown"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="instancetype-webhook",
        description="Check, flatten and preview KubeVirt VirtualMachines that use instance types and preferences.",
    )
    parser.add_argument("--version", action=VersionAction, nargs=0,
                        help="print the version and whether the review path runs compiled, then exit")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:  # a module that cannot be imported is an error, never a command silently missing
        importlib.import_module(f"instancetype_webhook.cli.{name}").register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(args.func(args) or 0)
    except SourceUnavailable as exc:
        return unavailable(args.command, exc)


UNAVAILABLE = 3


def unavailable(command: str, exc: SourceUnavailable) -> int:
    """The CLI's answer to the one refusal "the source cannot answer": one line, exit status 3."""
    print(f"{command}: {exc.reason} (the cluster did not answer in time; try again)", file=sys.stderr)
    return UNAVAILABLE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
