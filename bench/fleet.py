"""Audit and sweep at scale: 10,000 VMs with mixed catalogue references over 50 namespaces,
10,000 generated instance types and preferences, on the strict fake API server (its own process,
bench/fake_cluster.py), with the real webhook (`serve --kubeconfig`, TLS, policy expandAll) as its
admission webhook, so every sweep write, dry-run ones too, passes /mutate and /validate.

Steps, each timed:
1. the fake API server on its own: LIST every VM in pages of 500, and GET single VMs with 8 clients;
2. the webhook: start, sync (10,000 objects cached), RSS when ready;
3. audit (in this process; the decision only, after the session is open) and the CLI's wall time;
4. sweep --dry-run, then the sweep (concurrency 8), then a second sweep (0 writes expected);
5. webhook RSS after the sweep.
Targets: audit >= 1,000 VMs/s, sweep >= 150 VMs/s flattened, webhook RSS <= 150 MB.
Results go to bench/results/fleet-<date>.json. Run: .venv/bin/python bench/fleet.py [--vms N --objects N]
"""
from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path[:0] = [str(BENCH), str(ROOT)]

from machine import describe  # noqa: E402  (after the sys.path set-up)
from servers import _process_tree, _rss, free_port  # noqa: E402  (after the sys.path set-up)
from tlsfiles import write_self_signed  # noqa: E402  (after the sys.path set-up)

from instancetype_webhook.fleet.audit import audit  # noqa: E402  (after the sys.path set-up)
from instancetype_webhook.fleet.session import open_session  # noqa: E402  (after the sys.path set-up)
from instancetype_webhook.fleet.sweep import SweepOptions, sweep  # noqa: E402  (after the sys.path set-up)

TARGETS = {"audit_vms_per_s": 1000, "sweep_vms_per_s": 150, "webhook_rss_mb": 150}


class FakeCluster:
    def __init__(self, objects: int, vms: int):
        self.proc = subprocess.Popen([sys.executable, str(BENCH / "fake_cluster.py"), "--objects", str(objects),
                                      "--vms", str(vms)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.info = json.loads(self.proc.stdout.readline())

    def ask(self, line: str) -> dict[str, Any]:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def close(self) -> None:
        with contextlib.suppress(BrokenPipeError, ValueError):
            self.ask("quit")
        self.proc.wait(10)


def rss_mb(pid: int) -> float:
    return sum(_rss(p) for p in _process_tree(pid)) / 2**20


def fake_alone(session: Any, vms: int) -> dict[str, float]:
    client = session.client
    start = time.perf_counter()
    listed = sum(1 for _ in client.list(None))
    list_s = time.perf_counter() - start
    keys = [(f"ns-{i % 50:02d}", f"vm-{i:05d}") for i in range(min(vms, 2000))]
    start = time.perf_counter()
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda k: client.get(*k), keys))
    get_s = time.perf_counter() - start
    return {"listed": listed, "list_vms_per_s": listed / list_s, "get_per_s": len(keys) / get_s}


def wait_ready(url: str, ca: Path, timeout: float = 120) -> float:
    import httpx

    start = time.monotonic()
    with httpx.Client(verify=__import__("ssl").create_default_context(cafile=str(ca)), timeout=2) as client:
        while time.monotonic() - start < timeout:
            try:
                if client.get(url + "/readyz").status_code == 200:
                    return time.monotonic() - start
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
    raise RuntimeError("webhook not ready")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vms", type=int, default=10_000)
    parser.add_argument("--objects", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--results-dir", default=str(BENCH / "results"))
    args = parser.parse_args()
    result: dict[str, Any] = {"machine": describe(), "vms": args.vms, "objects": args.objects,
                              "concurrency": args.concurrency, "targets": TARGETS}
    work = Path(tempfile.mkdtemp(prefix="fleet-bench-"))
    start = time.monotonic()
    cluster = FakeCluster(args.objects, args.vms)
    result["fake_load_s"] = time.monotonic() - start
    webhook = session = None
    try:
        config = work / "kubeconfig"
        config.write_text(json.dumps(cluster.info["kubeconfig"]))
        session = open_session(config, False, policy="expandAll")
        result["fake_alone"] = fake_alone(session, args.vms)

        tls = write_self_signed(work)
        cert, key = tls.cert, tls.key
        port = free_port()
        with open(work / "webhook.log", "w") as log:  # the webhook keeps its own copy of the descriptor
            webhook = subprocess.Popen(
                [sys.executable, "-m", "instancetype_webhook",
                 "serve", "--kubeconfig", str(config), "--policy", "expandAll",
                 "--host", "127.0.0.1", "--port", str(port), "--tls-cert", str(cert), "--tls-key", str(key),
                 "--metrics-port", "0", "--log-level", "warning"],
                cwd=ROOT, stdout=subprocess.DEVNULL, stderr=log)
        url = f"https://127.0.0.1:{port}"
        result["webhook_ready_s"] = wait_ready(url, cert)
        result["webhook_rss_ready_mb"] = rss_mb(webhook.pid)
        cluster.ask(f"admission {url}/mutate {url}/validate {cert}")

        start = time.perf_counter()
        findings = audit(session.client, session.ctx, None)
        elapsed = time.perf_counter() - start
        counts = {a: sum(1 for f in findings if f.action == a) for a in {f.action for f in findings}}
        result["audit"] = {"seconds": elapsed, "vms": len(findings), "vms_per_s": len(findings) / elapsed,
                           "summary": counts}
        start = time.perf_counter()
        cli = subprocess.run([sys.executable, "-m", "instancetype_webhook",
                              "audit", "--kubeconfig", str(config), "-A", "-o", "json"],
                             cwd=ROOT, capture_output=True, text=True)
        result["audit"]["cli_wall_s"] = time.perf_counter() - start
        result["audit"]["cli_exit"] = cli.returncode

        session.client.set_pool_size(args.concurrency + 2)
        for name, dry in (("sweep_dry_run", True), ("sweep", False), ("sweep_again", False)):
            before = cluster.ask("stats")
            start = time.perf_counter()
            swept = sweep(session.client, session.ctx, None,
                          SweepOptions(dry_run=dry, concurrency=args.concurrency))
            elapsed = time.perf_counter() - start
            after = cluster.ask("stats")
            flattened = sum(1 for f in swept.findings if f.action == "flatten")
            result[name] = {"seconds": elapsed, "vms": len(swept.findings), "flattened": flattened,
                            "flattened_per_s": flattened / elapsed, "vms_per_s": len(swept.findings) / elapsed,
                            "writes": swept.writes, "conflicts_retried": swept.conflicts_retried,
                            "disagreements": swept.disagreements,
                            "webhook_calls": after["reviews"] - before["reviews"],
                            "stored_writes": after["writes"] - before["writes"]}
        result["webhook_rss_after_mb"] = rss_mb(webhook.pid)
    finally:
        if session:
            session.close()
        if webhook:
            webhook.terminate()
            webhook.wait(20)
        cluster.close()
    result["load_average_at_end"] = list(os.getloadavg())
    met = {
        "audit_vms_per_s": result["audit"]["vms_per_s"] >= TARGETS["audit_vms_per_s"],
        "sweep_vms_per_s": result["sweep"]["flattened_per_s"] >= TARGETS["sweep_vms_per_s"],
        "webhook_rss_mb": (max(result["webhook_rss_ready_mb"], result["webhook_rss_after_mb"])
                           <= TARGETS["webhook_rss_mb"]),
    }
    result["met"] = met
    out = Path(args.results_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"fleet-{dt.datetime.now(dt.UTC):%Y%m%dT%H%M%SZ}.json"
    path.write_text(json.dumps(result, indent=2))
    fa, au = result["fake_alone"], result["audit"]
    print(f"fake API server alone: LIST {fa['list_vms_per_s']:.0f} VMs/s (pages of 500), "
          f"GET {fa['get_per_s']:.0f}/s (8 clients)")
    print(f"webhook: ready in {result['webhook_ready_s']:.1f}s, RSS {result['webhook_rss_ready_mb']:.0f} MB ready, "
          f"{result['webhook_rss_after_mb']:.0f} MB after the sweep  [{'met' if met['webhook_rss_mb'] else 'MISSED'}]")
    print(f"audit: {au['vms']} VMs in {au['seconds']:.2f}s = {au['vms_per_s']:.0f} VMs/s {au['summary']} "
          f"(CLI wall {au['cli_wall_s']:.1f}s)  [{'met' if met['audit_vms_per_s'] else 'MISSED'}]")
    for name in ("sweep_dry_run", "sweep", "sweep_again"):
        s = result[name]
        print(f"{name}: {s['vms']} VMs in {s['seconds']:.1f}s, "
              f"flattened {s['flattened']} = {s['flattened_per_s']:.0f}/s, "
              f"writes {s['writes']}, webhook calls {s['webhook_calls']}, conflicts {s['conflicts_retried']}, "
              f"disagreements {s['disagreements']}")
    print(f"sweep target [{'met' if met['sweep_vms_per_s'] else 'MISSED'}]; load average at start "
          f"{result['machine']['load_average_at_start']}, at end {result['load_average_at_end']}; {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
