"""The `instancetype-webhook` console script: one module per subcommand, each with `register(subparsers)`.

Exit status common to every command (docs/reference/exit-codes.md): 3 when a live source (the cluster's API
server) could not answer in time (`kubevirt.source.SourceUnavailable`: retry once it answers); 70 for an unexpected
error (a bug: one line, the traceback with --debug or INSTANCETYPE_WEBHOOK_DEBUG=1); 130 on Ctrl-C; argparse's 2
for a bad command line. Each command documents its own 0, 1 and 2.

Every command takes --debug; the offline ones also take -q/--quiet (no `note:` lines on stderr)."""
from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.metadata
import os
import sys
import traceback
from typing import TextIO

from instancetype_webhook.compiled import build_summary
from instancetype_webhook.kubevirt.source import SourceUnavailable

# Each name is a module instancetype_webhook.cli.<name> exposing register(subparsers) that sets `func` on its parser;
# func(args) returns the exit status.
COMMANDS = ("expand", "validate", "conformance", "domxml", "serve", "certs", "audit", "sweep", "resize", "plan",
            "playground", "fn", "completion")
# The commands whose `note:` lines --quiet leaves out (the servers log instead: --log-level)
QUIET_COMMANDS = frozenset(COMMANDS) - {"serve", "playground", "completion"}
DEBUG_ENV = "INSTANCETYPE_WEBHOOK_DEBUG"


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
    for name, sub in subparsers.choices.items():  # the flags every command shares
        sub.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                         help=f"show the traceback of an unexpected error (or {DEBUG_ENV}=1)")
        if name in QUIET_COMMANDS:
            sub.add_argument("-q", "--quiet", action="store_true", default=argparse.SUPPRESS,
                             help="leave out the note: lines on stderr (warnings and errors still show)")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    debug = bool(getattr(args, "debug", False)) or os.environ.get(DEBUG_ENV, "") not in ("", "0")
    stderr = sys.stderr
    if getattr(args, "quiet", False):
        from instancetype_webhook.cli.output import Quiet

        sys.stderr = Quiet(stderr)  # a text stream that leaves out the notes
    try:
        code = int(args.func(args) or 0)
        sys.stdout.flush()  # here, where a closed pipe is caught, not at exit
        return code
    except SourceUnavailable as exc:
        return unavailable(args.command, exc)
    except KeyboardInterrupt:
        print(f"{parser.prog} {args.command}: interrupted", file=stderr)
        return INTERRUPTED
    except BrokenPipeError:  # the reader went away (`| head`): nothing more to say
        silence_stdout()
        return 0
    except Exception as exc:  # noqa: BLE001  # the last resort: one line, never a traceback
        return internal_error(parser.prog, args.command, exc, debug, stderr)
    finally:
        if sys.stderr is not stderr:
            sys.stderr.flush()
            sys.stderr = stderr


UNAVAILABLE = 3
INTERNAL = 70  # sysexits.h EX_SOFTWARE: apart from every exit status a command gives itself (plan: 4, 5)
INTERRUPTED = 130


def internal_error(prog: str, command: str, exc: BaseException, debug: bool, err: TextIO) -> int:
    """An error no command expected: one line (the traceback with --debug), exit status 70."""
    if debug:
        traceback.print_exception(exc, file=err)
    what = "out of memory" if isinstance(exc, MemoryError) else f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
    hint = "" if debug else f" (--debug or {DEBUG_ENV}=1 shows where)"
    print(f"{prog} {command}: unexpected error: {what}{hint}", file=err)
    return INTERNAL


def silence_stdout() -> None:
    """After EPIPE, point stdout at /dev/null so the interpreter's final flush cannot raise again."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def unavailable(command: str, exc: SourceUnavailable) -> int:
    """The CLI's answer to the one refusal "the source cannot answer": one line, exit status 3."""
    print(f"{command}: {exc.reason} (the cluster did not answer in time; try again)", file=sys.stderr)
    return UNAVAILABLE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
