"""`instancetype-webhook sweep` on the fake API server (tests/cli/conftest.py): it writes, then writes nothing; a
dry run stores nothing; the flags it checks first."""
from __future__ import annotations

import json
import time

import pytest

from instancetype_webhook.fleet.sweep import RateLimiter
from tests.kit.cli import run_main


def test_dry_run_stores_nothing(config, fake):
    code, out, _ = run_main("sweep", "--kubeconfig", config, "-n", "apps", "-o", "json", "--dry-run")
    doc = json.loads(out)
    assert code == 0 and doc["summary"]["flattened"] == 2
    assert "instancetype" in fake.get("VirtualMachine", "web", "apps")["spec"]  # still the references
    code, out, _ = run_main("sweep", "--kubeconfig", config, "-n", "apps", "--dry-run")
    assert code == 0 and "dry run: nothing stored" in out


def test_sweep_writes_then_writes_nothing(config, fake):
    code, out, _ = run_main("sweep", "--kubeconfig", config, "-n", "apps", "-o", "json")
    doc = json.loads(out)
    assert code == 0 and doc["writes"] == 2 and doc["summary"]["flattened"] == 2
    assert "instancetype" not in fake.get("VirtualMachine", "web", "apps")["spec"]
    code, out, _ = run_main("sweep", "--kubeconfig", config, "-n", "apps")
    assert code == 0 and "writes: 0" in out


def test_an_unresolved_vm_exits_1_and_is_not_written(config, fake):
    code, out, _ = run_main("sweep", "--kubeconfig", config, "-n", "other", "-o", "json")
    assert code == 1 and json.loads(out)["writes"] == 0
    assert fake.get("VirtualMachine", "broken", "other")["spec"]["instancetype"]["name"] == "nope"


@pytest.mark.parametrize("argv", [["--concurrency", "0"], ["--rate", "-1"]])
def test_bad_concurrency_or_rate_is_one_line_and_exit_2(tmp_path, argv):
    code, out, err = run_main("sweep", "--kubeconfig", str(tmp_path / "never-read"), *argv)
    assert (code, out) == (2, "")
    assert err == "sweep: --concurrency must be at least 1 and --rate not negative\n"


def test_rate_limiter_spaces_writes():
    limiter = RateLimiter(50)
    start = time.monotonic()
    for _ in range(11):
        limiter.acquire()
    assert time.monotonic() - start >= 0.19  # 10 intervals of 20 ms
    unlimited = RateLimiter(0)
    start = time.monotonic()
    for _ in range(1000):
        unlimited.acquire()
    assert time.monotonic() - start < 0.5
