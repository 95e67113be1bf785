"""The skip policy of tests/conftest.py: a skip names what to install; under CI=true a skip fails the run."""
from __future__ import annotations

import os
import subprocess
import sys

from tests.kit.shared_data import ROOT

SAMPLE = '''
from tests.kit.needs import need_command

def test_runs():
    assert True

def test_needs_a_tool():
    need_command("no-such-tool-h10", "apt-get install no-such-tool")
'''


def _pytest(tmp_path, ci: str | None) -> subprocess.CompletedProcess:
    (tmp_path / "test_sample.py").write_text(SAMPLE)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci is not None:
        env["CI"] = ci
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "--noconftest", "-p", "tests.conftest",
                           "-p", "no:cacheprovider", "--rootdir", str(tmp_path), str(tmp_path)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def test_a_skip_names_what_to_install_and_passes_outside_ci(tmp_path):
    result = _pytest(tmp_path, None)
    assert result.returncode == 0, result.stdout
    assert "needs `no-such-tool-h10`; install: apt-get install no-such-tool" in result.stdout
    assert "1 passed, 1 skipped" in result.stdout


def test_a_skip_fails_the_run_under_ci(tmp_path):
    result = _pytest(tmp_path, "true")
    assert result.returncode == 1, result.stdout
    assert "skipped under CI=true: the run fails" in result.stdout
    assert "SKIPPED test_sample.py::test_needs_a_tool: needs `no-such-tool-h10`" in result.stdout
