"""The `instancetype-webhook` console script: one module per subcommand, each with `register(subparsers)`."""
from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import sys

from instancetype_webhook.compiled import build_summary

# Each name is a module instancetype_webhook.cli.<name> exposing register(subparsers) that sets `func` on its parser;
# func(args) returns the exit status.
COMMANDS = ("expand", "validate", "conformance", "domxml", "serve", "certs", "audit", "sweep", "resize", "plan",
            "playground")


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
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"instancetype_webhook.cli.{name}")
        except ModuleNotFoundError as exc:  # a subcommand still being built
            if exc.name != f"instancetype_webhook.cli.{name}":
                raise
            continue
        module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    return int(args.func(args) or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
