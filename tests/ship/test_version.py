"""One version source: instancetype_webhook/_version.py; the chart, the manifests and the docs follow it
(tools/version.py checks and sets them)."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from instancetype_webhook import __version__
from tests.kit.shared_data import ROOT


def test_every_place_follows_the_package_version():
    done = subprocess.run([sys.executable, "tools/version.py"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout == "", done.stdout


def test_setting_a_version_writes_every_place(tmp_path: Path):
    for name in ("tools/version.py", "instancetype_webhook/_version.py", "charts/instancetype-webhook/Chart.yaml",
                 "webhook_config/kustomization.yaml", "webhook_config/deployment.yaml", "docs/install/index.md"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, tmp_path / name)
    tool = [sys.executable, str(tmp_path / "tools" / "version.py")]
    assert subprocess.run([*tool, "9.8.7"], capture_output=True, text=True).returncode == 0
    chart = (tmp_path / "charts/instancetype-webhook/Chart.yaml").read_text()
    assert "version: 9.8.7" in chart and 'appVersion: "9.8.7"' in chart
    assert "newTag: 9.8.7" in (tmp_path / "webhook_config/kustomization.yaml").read_text()
    assert '__version__ = "9.8.7"' in (tmp_path / "instancetype_webhook/_version.py").read_text()
    assert __version__ not in (tmp_path / "webhook_config/deployment.yaml").read_text()
    bad = subprocess.run([*tool, "nine"], capture_output=True, text=True)
    assert bad.returncode == 2 and "not a version" in bad.stderr
