"""tests.kit.cli: the command's exit code and output, in a subprocess and in this process."""
from __future__ import annotations

import sys

from instancetype_webhook import __version__
from tests.kit.cli import Result, run_cli, run_main


def test_run_cli_is_a_real_process_with_stdin_and_env(tmp_path):
    version = run_cli("--version", cwd=tmp_path)
    assert version == Result(0, version.out, version.err) and __version__ in version.out
    code, out, err = run_cli("expand", "-f", "-", stdin="kind: ConfigMap\nmetadata: {name: x}\n")
    assert code != 0 and out == "" and err


def test_run_main_swaps_the_standard_streams_back():
    before = sys.stdin, sys.stdout, sys.stderr
    code, out, err = run_main("expand", "-f", "-", "-o", "json", stdin="{not yaml: [")
    assert (sys.stdin, sys.stdout, sys.stderr) == before
    assert code != 0 and out == "" and err
