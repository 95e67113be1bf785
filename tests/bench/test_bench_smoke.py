"""A few-second smoke of the benchmark harness: it runs end to end and writes well-formed results.

Benchmarks are not tests: nothing here asserts a speed. It asserts that `bench/run.py --quick`
drove every target (the floor, /mutate, /validate) over plain HTTP and TLS with zero errors,
that every row has requests/s, p50 and p99, that the ratios and the memory/start-up figures are
there, and that the machine description was recorded. Needs Debian's `wrk` (installed by .ci/run).
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.kit.needs import need_command

ROOT = Path(__file__).resolve().parents[2]
TARGETS = {"floor", "mutate", "validate"}
TRANSPORTS = {"plain", "tls"}


@pytest.fixture(scope="module")
def smoke(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess, dict]:
    need_command("wrk", "apt-get install -y wrk (.ci/run installs it)")
    out = tmp_path_factory.mktemp("bench-results")
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "run.py"), "--quick", "--results-dir", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=180, check=False,
    )
    files = sorted(out.glob("*-quick.json"))
    assert len(files) == 1, f"no results file; stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc, json.loads(files[0].read_text())


def test_harness_exits_cleanly_and_prints_the_table(smoke) -> None:
    proc, _ = smoke
    assert proc.returncode == 0, f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    assert "req/s" in proc.stdout and "ours/floor" in proc.stdout


def test_every_target_and_transport_has_figures(smoke) -> None:
    _, results = smoke
    rows = {(r["target"], r["transport"]): r for r in results["runs"]}
    assert set(rows) == {(t, tr) for t in TARGETS for tr in TRANSPORTS}
    for key, row in rows.items():
        assert "error" not in row, (key, row.get("error"))
        assert row["requests"] > 0 and row["requests_per_s"] > 0, key
        assert row["error_count"] == 0, (key, row["errors"])
        lat = row["latency_ms"]
        assert 0 < lat["p50"] <= lat["p99"] <= lat["max"], (key, lat)
        assert row["server_cpu_share"] > 0 and row["server_cpu_us_per_request"] > 0, key


def test_ours_rows_carry_ratios_and_checked_answers(smoke) -> None:
    _, results = smoke
    for row in results["runs"]:
        if row["target"] == "floor":
            continue
        assert row["ratio_to_floor"] > 0
        assert row["answer"]["status"] == 200 and row["answer"]["allowed"] is True
    mutate = [r for r in results["runs"] if r["target"] == "mutate"]
    assert all(r["answer"]["patch_operations"] > 0 for r in mutate)


def test_memory_and_startup_figures(smoke) -> None:
    _, results = smoke
    memory = results["memory"]
    for part in ("bundled", "generated"):
        figures = memory[part]
        assert figures["ready_s"] > 0
        assert figures["rss_ready_bytes"] > 10 * 1024 * 1024
        assert figures["requests_ok"] == figures["requests"]
    assert memory["generated"]["generated_objects"] == 200


def test_machine_description_and_target_verdicts(smoke) -> None:
    _, results = smoke
    machine = results["machine"]
    for key in ("cpu_model", "cores", "python", "packages", "date", "wrk"):
        assert machine[key], key
    assert machine["packages"]["uvicorn"] and machine["packages"]["orjson"]
    names = [t["name"] for t in results["targets"]]
    assert len(names) == 6 and all(t["measured"] is not None for t in results["targets"])


def test_library_benchmark_joined_the_run(smoke) -> None:
    _, results = smoke
    library = results["library"]
    assert "error" not in library, library
    assert library["cases_per_second"] > 0 and library["mean_ms_per_expansion"] > 0
