"""Soak: the real webhook (uvicorn, TLS, policy expand, bundled catalogue) at a fixed request rate for
a long time, with a mix of reviews; zero errors and bounded memory growth.

    python bench/soak.py                      # 10 minutes at 100 requests/s (the reliability target's soak)
    python bench/soak.py --duration 60        # a shorter run
    python bench/soak.py --rate 100 --json-out bench/results/soak.json

The mix (weights): VM CREATE flattened under expand, VM UPDATE, a VM that conflicts with its instance
type (denied), a VM naming a missing instance type (denied), /validate of a VM, an instance type
object, an unrelated Pod, a DELETE, and a body that is not an AdmissionReview (400 expected).
An error is anything else: a transport failure, a 5xx, an unexpected status, an answer that is not
a well-formed AdmissionReview for its request, or an answer slower than 10 s.

RSS is that of the server process: `start` is taken after the warm-up (the first tenth of the run,
at most 30 s: caches and allocator arenas fill there), `end` at the end; growth = end/start - 1.
Exits 1 if there was any error or the growth reached --max-growth (10%).
"""
from __future__ import annotations

import argparse
import copy
import itertools
import json
import random
import statistics
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.review import admission_review, typical_vm  # noqa: E402  (after the sys.path set-up)
from bench.servers import HOST, Server, free_port  # noqa: E402  (after the sys.path set-up)
from instancetype_webhook.certs import generate, write_bundle  # noqa: E402  (after the sys.path set-up)

UID = "00000000-0000-0000-0000-000000000000"


@dataclass
class Kind:
    name: str
    path: str
    body: bytes
    weight: int
    status: int = 200
    allowed: bool | None = None  # None: either


def _review(obj: dict[str, Any], operation: str = "CREATE", group: str = "kubevirt.io",
            kind: str = "VirtualMachine", old: dict[str, Any] | None = None) -> bytes:
    doc = admission_review(obj, operation) if kind == "VirtualMachine" else {
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {"kind": {"group": group, "version": "v1", "kind": kind}, "operation": operation,
                    "namespace": "bench", "name": obj["metadata"]["name"], "object": obj}}
    doc["request"]["uid"] = UID
    if old is not None:
        doc["request"]["oldObject"] = old
    return orjson.dumps(doc)


def mix() -> list[Kind]:
    vm = typical_vm()
    conflict = copy.deepcopy(vm)
    conflict["spec"]["template"]["spec"]["domain"]["cpu"] = {"sockets": 7}
    missing = copy.deepcopy(vm)
    missing["spec"]["instancetype"]["name"] = "does-not-exist"
    instancetype = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineInstancetype",
                    "metadata": {"name": "soak", "namespace": "bench"},
                    "spec": {"cpu": {"guest": 2}, "memory": {"guest": "2Gi"}}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "bench"}, "spec": {}}
    return [
        Kind("create", "/mutate", _review(vm), 40, allowed=True),
        Kind("update", "/mutate", _review(vm, "UPDATE", old=vm), 10, allowed=True),
        Kind("conflict", "/mutate", _review(conflict), 8, allowed=False),
        Kind("missing", "/mutate", _review(missing), 5, allowed=False),
        Kind("validate", "/validate", _review(vm), 20, allowed=True),
        Kind("instancetype", "/validate", _review(instancetype, group="instancetype.kubevirt.io",
                                                  kind="VirtualMachineInstancetype"), 5, allowed=True),
        Kind("pod", "/mutate", _review(pod, group="", kind="Pod"), 5, allowed=True),
        Kind("delete", "/validate", _review(vm, "DELETE"), 4, allowed=True),
        Kind("bad", "/mutate", b'{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1"}', 3, status=400),
    ]


@dataclass
class Tally:
    sent: int = 0
    errors: list[str] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    by_kind: dict[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, kind: str, seconds: float, error: str | None) -> None:
        with self.lock:
            self.sent += 1
            self.latencies.append(seconds)
            self.by_kind[kind] = self.by_kind.get(kind, 0) + 1
            if error:
                self.errors.append(f"{kind}: {error}")


def check(kind: Kind, resp: httpx.Response, uid: str) -> str | None:
    if resp.status_code != kind.status:
        return f"HTTP {resp.status_code}: {resp.text[:200]}"
    body = resp.json()
    if kind.status != 200:
        return None if "error" in body else f"no error in {body}"
    answer = body.get("response") or {}
    if body.get("kind") != "AdmissionReview" or answer.get("uid") != uid:
        return f"malformed answer {str(body)[:200]}"
    if kind.allowed is not None and answer.get("allowed") is not kind.allowed:
        return f"allowed={answer.get('allowed')} (expected {kind.allowed}): {answer.get('status')}"
    return None


def drive(url: str, ca: Path, kinds: list[Kind], rate: float, duration: float, tally: Tally, workers: int) -> None:
    """Open loop: request i is due at start + i/rate, whichever worker is free sends it."""
    schedule = list(itertools.chain.from_iterable([k] * k.weight for k in kinds))
    random.Random(0).shuffle(schedule)  # interleave the kinds, the same way every run
    counter = itertools.count()
    start = time.monotonic()
    total = int(rate * duration)

    def worker() -> None:
        with httpx.Client(base_url=url, verify=httpx.create_ssl_context(verify=str(ca)), timeout=10) as client:
            while True:
                i = next(counter)
                if i >= total:
                    return
                delay = start + i / rate - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                kind = schedule[i % len(schedule)]
                uid = str(uuid.uuid4())
                t0 = time.perf_counter()
                try:
                    resp = client.post(kind.path, content=kind.body.replace(UID.encode(), uid.encode()),
                                       headers={"content-type": "application/json"})
                    error = check(kind, resp, uid)
                except (httpx.HTTPError, ValueError) as exc:
                    error = f"{type(exc).__name__}: {exc}"
                took = time.perf_counter() - t0
                tally.record(kind.name, took, error or (f"slow: {took:.1f}s" if took > 10 else None))

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--duration", type=float, default=600, help="seconds (default 600)")
    p.add_argument("--rate", type=float, default=100, help="requests per second (default 100)")
    p.add_argument("--workers", type=int, default=8, help="client threads (default 8)")
    p.add_argument("--max-growth", type=float, default=0.10, help="allowed RSS growth (default 0.10)")
    p.add_argument("--json-out", type=Path, help="write the figures here as JSON")
    args = p.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="soak-"))
    certs = write_bundle(generate(["127.0.0.1", "localhost"]), work / "certs", overwrite=True)
    port = free_port()
    server = Server("webhook", [sys.executable, "-m", "instancetype_webhook",
                                "serve", "--host", HOST, "--port", str(port),
                                "--metrics-port", "0", "--policy", "expand", "--log-level", "warning",
                                "--tls-cert", str(certs["tls.crt"]), "--tls-key", str(certs["tls.key"])],
                    f"https://{HOST}:{port}", log_path=work / "server.log")
    tally = Tally()
    samples: list[tuple[float, int]] = []
    warmup = min(30.0, args.duration / 10)
    with server:
        server.wait_ready()
        rss_ready = server.rss_bytes()
        done = threading.Event()

        def sample() -> None:
            t0 = time.monotonic()
            while not done.wait(1.0 if time.monotonic() - t0 < warmup + 2 else 10.0):
                samples.append((time.monotonic() - t0, server.rss_bytes()))
                if len(samples) % 6 == 0:
                    print(f"  t={samples[-1][0]:5.0f}s rss={samples[-1][1] / 2**20:.1f} MiB sent={tally.sent}"
                          f" errors={len(tally.errors)}", file=sys.stderr, flush=True)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        began = time.monotonic()
        drive(server.base_url, certs["ca.crt"], mix(), args.rate, args.duration, tally, args.workers)
        elapsed = time.monotonic() - began
        done.set()
        sampler.join()
        rss_end = server.rss_bytes()
        alive = server.process is not None and server.process.poll() is None
    after_warmup = [rss for t, rss in samples if t >= warmup]
    rss_start = after_warmup[0] if after_warmup else rss_ready
    lat = sorted(tally.latencies) or [0.0]
    figures = {
        "duration_s": round(elapsed, 1), "target_rate": args.rate, "requests": tally.sent,
        "achieved_rate": round(tally.sent / elapsed, 2), "errors": len(tally.errors),
        "first_errors": tally.errors[:10], "by_kind": tally.by_kind,
        "latency_ms": {"p50": round(statistics.median(lat) * 1000, 2),
                       "p99": round(lat[int(len(lat) * 0.99) - 1 if len(lat) > 1 else 0] * 1000, 2),
                       "max": round(lat[-1] * 1000, 2)},
        "rss_mib": {"ready": round(rss_ready / 2**20, 1), "start": round(rss_start / 2**20, 1),
                    "end": round(rss_end / 2**20, 1),
                    "max": round(max([rss_end, *(s[1] for s in samples)]) / 2**20, 1)},
        "rss_growth": round(rss_end / rss_start - 1, 4), "warmup_s": warmup, "server_alive": alive,
    }
    print(json.dumps(figures, indent=1))
    if args.json_out:
        args.json_out.parent.mkdir(parents=True, exist_ok=True)
        args.json_out.write_text(json.dumps(figures, indent=1) + "\n")
    ok = not tally.errors and figures["rss_growth"] < args.max_growth and alive
    print("soak: " + ("OK" if ok else "FAILED"), file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
