"""A few-second smoke of bench/fleet.py (200 VMs, 200 generated objects): it runs end to end and writes
well-formed figures. Nothing here asserts a speed; the sweep's own counts must add up."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_fleet_bench_runs_and_reports(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "fleet.py"), "--vms", "200", "--objects", "200",
                           "--results-dir", str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-2000:]
    (path,) = tmp_path.glob("fleet-*.json")
    result = json.loads(path.read_text())
    audit, dry, swept, again = result["audit"], result["sweep_dry_run"], result["sweep"], result["sweep_again"]
    assert audit["vms"] == 200 and audit["vms_per_s"] > 0 and audit["cli_exit"] == 1  # mixed: some refused
    assert dry["flattened"] == swept["flattened"] == audit["summary"]["flatten"] > 0
    assert dry["writes"] == dry["stored_writes"] == 0 and dry["webhook_calls"] == 2 * dry["flattened"]
    assert swept["writes"] == swept["stored_writes"] == swept["flattened"] and swept["disagreements"] == 0
    assert again["writes"] == again["webhook_calls"] == 0
    assert result["fake_alone"]["listed"] == 200 and result["webhook_rss_ready_mb"] > 10
    assert set(result["met"]) == {"audit_vms_per_s", "sweep_vms_per_s", "webhook_rss_mb"}
