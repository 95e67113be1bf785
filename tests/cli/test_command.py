"""cli/command.py: every subcommand's parser takes its module docstring as written, and its one-line help."""
from __future__ import annotations

import argparse

from instancetype_webhook.cli import build_parser
from instancetype_webhook.cli.command import add_command


def test_the_description_is_printed_as_written_and_the_summary_is_the_help():
    parser = argparse.ArgumentParser(prog="tool")
    sub = parser.add_subparsers(dest="command")
    doc = "First line.\n\n    indented example\n"
    command = add_command(sub, "thing", "does the thing", doc)
    assert command.description == doc and command.formatter_class is argparse.RawDescriptionHelpFormatter
    assert "    indented example" in command.format_help()
    assert "does the thing" in parser.format_help()


def test_every_command_of_the_cli_has_a_summary_and_a_description():
    actions = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]  # noqa: SLF001
    (subparsers,) = actions
    summaries = {choice.dest: choice.help for choice in subparsers._choices_actions}  # noqa: SLF001
    for name, command in subparsers.choices.items():
        assert summaries[name] and command.description, name
