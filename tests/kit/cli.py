"""Running the `instancetype-webhook` command as a user does, and reading what it printed.

- `run_cli`: a real subprocess (`python -m instancetype_webhook ...`), for what only a process shows (exit
  codes from signals, the real stdin, the environment, `--version`'s start-up).
- `run_main`: `instancetype_webhook.cli.main` in this process with stdin/stdout/stderr swapped, for speed.

Both return a `Result(code, out, err)`, which unpacks as the tuple `code, out, err`.
"""
from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[2]


class Result(NamedTuple):
    code: int
    out: str
    err: str


def run_cli(*args: str, stdin: str | None = None, cwd: Path | str | None = None,
            env: dict[str, str] | None = None, timeout: float = 120) -> Result:
    """`python -m instancetype_webhook *args` in a subprocess (cwd: the checkout; env: added to this one's)."""
    done = subprocess.run([sys.executable, "-m", "instancetype_webhook", *args], input=stdin,
                          cwd=cwd or ROOT, env={**os.environ, **(env or {})}, capture_output=True, text=True,
                          timeout=timeout)
    return Result(done.returncode, done.stdout, done.stderr)


def run_main(*args: str, stdin: str = "") -> Result:
    """`instancetype_webhook.cli.main(list(args))` in this process, `stdin` as its standard input."""
    from instancetype_webhook.cli import main

    out, err = io.StringIO(), io.StringIO()
    old = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = io.StringIO(stdin), out, err
    try:
        code = main(list(args))
    finally:
        sys.stdin, sys.stdout, sys.stderr = old
    return Result(code, out.getvalue(), err.getvalue())
