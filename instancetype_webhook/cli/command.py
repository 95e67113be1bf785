"""One subcommand's parser, as every command module registers it: its name, its one-line help, and its module
docstring as the description, printed as written (`instancetype-webhook COMMAND --help`)."""
from __future__ import annotations

import argparse
from typing import Any


def add_command(subparsers: Any, name: str, summary: str, doc: str | None) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        name, help=summary, description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    return parser
