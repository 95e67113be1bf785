"""The static checks configured in pyproject.toml (`make lint`, `make typecheck`; `make test` runs both first)
are live: a finding of each kind is reported where it must be.

ruff (pyflakes, pycodestyle errors, bugbear, pyupgrade, isort, simplify) checks the whole repository; mypy
checks instancetype_webhook/, strictly for the pure core (kubevirt, domxml, patch.py), the admission decision
(admission/), assembly.py and conformance/; import-linter checks the floors (docs/architecture.md).
"""
from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.kit.needs import skip_missing
from tests.kit.shared_data import ROOT

UNDEFINED_NAME = "def f() -> None:\n    print_verdict()\n"
UNTYPED_DEF = "def double(x):\n    return x * 2\n"
BAD_BODY = "def double(x):\n    y: int = 'two'\n    return x * y\n"


def _tool(module: str) -> None:
    if importlib.util.find_spec(module) is None:
        skip_missing(f"the `{module}` Python package", "make install (it is in the `test` extra)")


def _run(args: list[str], stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, input=stdin, capture_output=True, text=True,
                          timeout=540)


def test_ruff_probe_finds_an_undefined_name() -> None:
    _tool("ruff")
    done = _run(["ruff", "check", "--no-cache", "--output-format", "concise", "--stdin-filename",
                 "instancetype_webhook/cli/probe.py", "-"], stdin=UNDEFINED_NAME)
    assert done.returncode == 1
    assert "F821" in done.stdout and "print_verdict" in done.stdout


def _mypy_probe(tmp_path: Path, stands_for: str, source: str) -> str:
    """mypy's findings for `source` checked in place of the module file `stands_for` (so its settings apply)."""
    shadow = tmp_path / "probe.py"
    shadow.write_text(source)
    done = _run(["mypy", "--cache-dir", str(tmp_path / "cache"), "--follow-imports", "silent",
                 "--shadow-file", stands_for, str(shadow), stands_for])
    return done.stdout


def test_mypy_probe_is_strict_on_the_core(tmp_path: Path) -> None:
    _tool("mypy")
    assert "[no-untyped-def]" in _mypy_probe(tmp_path, "instancetype_webhook/patch.py", UNTYPED_DEF)
    assert "[no-untyped-def]" in _mypy_probe(tmp_path, "instancetype_webhook/admission/policy.py", UNTYPED_DEF)


def test_mypy_probe_checks_untyped_bodies_at_the_edges(tmp_path: Path) -> None:
    _tool("mypy")
    assert "no-untyped-def" not in _mypy_probe(tmp_path, "instancetype_webhook/cli/certs.py", UNTYPED_DEF)
    assert "[assignment]" in _mypy_probe(tmp_path, "instancetype_webhook/cli/certs.py", BAD_BODY)


def test_the_floors_hold_and_an_upward_import_is_reported(tmp_path: Path) -> None:
    _tool("importlinter")
    lint_imports = str(Path(sys.executable).parent / "lint-imports")
    done = subprocess.run([lint_imports, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "0 broken" in done.stdout, done.stdout + done.stderr
    # the probe goes into a copy of the package (never the tree other tests, e.g. the compiled build, read)
    shutil.copytree(ROOT / "instancetype_webhook", tmp_path / "instancetype_webhook",
                    ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "instancetype_webhook" / "kubevirt" / "zz_probe_upward.py").write_text(
        "from instancetype_webhook.admission import policy  # noqa: F401\n")
    done = subprocess.run([lint_imports, "--no-cache"], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert done.returncode == 1, done.stdout + done.stderr
    assert "instancetype_webhook.kubevirt is not allowed to import instancetype_webhook.admission" in " ".join(
        done.stdout.split())
