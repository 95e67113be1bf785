"""Memory and start-up check of the shipped server process.

1. `serve` with the bundled catalogue, started 3 times (the median start is kept): seconds from
   spawn to the first 200 on /readyz, and RSS when ready and after a burst of /mutate requests.
2. `serve --catalog DIR` where DIR holds the bundled catalogue plus N generated instance types
   and preferences (10,000 by default, a quarter of each of the four kinds, the namespaced ones
   spread over 50 namespaces), modelled on the bundled objects: the same figures.
RSS is the resident set of the server process and its children, from /proc.

Run alone: python bench/memory.py [--objects 10000] [--starts 3] [--requests 200]
           python bench/memory.py --quick   (1 start, 100 objects, 20 requests: proves it runs, the figures mean little)
"""
from __future__ import annotations

import argparse
import copy
import http.client
import shutil
import ssl
import sys
import tempfile
from pathlib import Path
from typing import Any

import orjson
import yaml

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parent.parent)]  # bench/, repo root

from review import write_review  # noqa: E402  (after the sys.path set-up)
from servers import HOST, Server, free_port  # noqa: E402  (after the sys.path set-up)
from targets import ROOT, Tls, serve_argv  # noqa: E402  (after the sys.path set-up)
from tlsfiles import write_self_signed  # noqa: E402  (after the sys.path set-up)

from instancetype_webhook.catalog import CATALOG_DIR  # noqa: E402  (after the sys.path set-up)
from instancetype_webhook.kubevirt.source import (  # noqa: E402  (after the sys.path set-up)
    CLUSTER_INSTANCETYPE,
    CLUSTER_PREFERENCE,
    INSTANCETYPE,
    PREFERENCE,
)
from instancetype_webhook.sources.catalog import load_catalog  # noqa: E402  (after the sys.path set-up)

NAMESPACES = 50
BURST = 200
GENERATED_KINDS = (CLUSTER_INSTANCETYPE, INSTANCETYPE, CLUSTER_PREFERENCE, PREFERENCE)


def _templates(objects: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    by_kind = {kind: [o for o in objects if o["kind"] == kind] for kind in (CLUSTER_INSTANCETYPE, CLUSTER_PREFERENCE)}
    return {CLUSTER_INSTANCETYPE: by_kind[CLUSTER_INSTANCETYPE], INSTANCETYPE: by_kind[CLUSTER_INSTANCETYPE],
            CLUSTER_PREFERENCE: by_kind[CLUSTER_PREFERENCE], PREFERENCE: by_kind[CLUSTER_PREFERENCE]}


def generated_object(kind: str, index: int, template: dict[str, Any]) -> dict[str, Any]:
    obj = copy.deepcopy(template)
    meta = obj["metadata"]
    obj["kind"] = kind
    meta["name"] = f"{meta['name']}-g{index}"
    meta["uid"] = f"00000000-0000-4000-8000-{index:012d}"
    meta["generation"] = 1
    if kind in (INSTANCETYPE, PREFERENCE):
        meta["namespace"] = f"tenant-{index % NAMESPACES}"
    return obj


def generate_catalog(directory: Path, count: int) -> int:
    """Write the bundled catalogue plus `count` generated objects under `directory`; return the total."""
    directory.mkdir(parents=True, exist_ok=True)
    bundled = load_catalog().objects()
    for path in CATALOG_DIR.glob("*.yaml"):
        shutil.copy(path, directory / path.name)
    templates = _templates(bundled)
    objects = []
    for index in range(count):
        kind = GENERATED_KINDS[index % len(GENERATED_KINDS)]
        pool = templates[kind]
        objects.append(generated_object(kind, index, pool[index % len(pool)]))
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    (directory / "generated.yaml").write_text(yaml.dump_all(objects, Dumper=dumper, sort_keys=False))
    return count + len(bundled)


def burst(port: int, body: bytes, count: int) -> list[int]:
    """POST the review to /mutate `count` times over one kept-alive TLS connection; the statuses."""
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    connection = http.client.HTTPSConnection(HOST, port, timeout=30, context=context)
    statuses = []
    try:
        for _ in range(count):
            connection.request("POST", "/mutate", body=body, headers={"Content-Type": "application/json"})
            response = connection.getresponse()
            response.read()
            statuses.append(response.status)
    finally:
        connection.close()
    return statuses


def measure_server(name: str, argv: list[str], port: int, body: bytes, logs: Path,
                   cpus: set[int] | None = None, requests: int = BURST) -> dict[str, Any]:
    server = Server(name, argv, f"https://{HOST}:{port}", cpus=cpus, log_path=logs / f"{name}.log",
                    env={"PYTHONPATH": str(ROOT)})
    with server:
        ready_s = server.wait_ready(timeout=120)
        rss_ready = server.rss_bytes()
        statuses = burst(port, body, requests)
        return {
            "ready_s": round(ready_s, 3),
            "rss_ready_bytes": rss_ready,
            "rss_after_requests_bytes": server.rss_bytes(),
            "requests": requests,
            "requests_ok": sum(status == 200 for status in statuses),
        }


def bundled_starts(workdir: Path, tls: Tls, body: bytes, cpus: set[int] | None, requests: int,
                   starts: int) -> dict[str, Any]:
    """The bundled-catalogue check, started `starts` times: the run with the median ready time stands."""
    runs = []
    for _ in range(starts):
        port = free_port()
        runs.append(measure_server("memory-bundled", serve_argv(port, tls), port, body, workdir, cpus, requests))
    chosen = dict(sorted(runs, key=lambda r: r["ready_s"])[len(runs) // 2])
    chosen["ready_s_samples"] = [r["ready_s"] for r in runs]
    return chosen


def measure(workdir: Path, tls: Tls, objects: int, cpus: set[int] | None = None,
            requests: int = BURST, starts: int = 3) -> dict[str, Any]:
    """Both checks; `workdir` receives the generated catalogue, the review body and the logs."""
    body = write_review(workdir / "review.json")
    results: dict[str, Any] = {"bundled": bundled_starts(workdir, tls, body, cpus, requests, starts)}
    total = generate_catalog(workdir / "catalog", objects)
    port = free_port()
    big = measure_server("memory-generated", serve_argv(port, tls, workdir / "catalog"), port, body, workdir,
                         cpus, requests)
    results["generated"] = {"objects": total, "generated_objects": objects, **big}
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description="RSS and time-to-ready of the webhook server")
    parser.add_argument("--objects", type=int, default=10_000, help="generated instance types and preferences")
    parser.add_argument("--starts", type=int, default=3, help="starts with the bundled catalogue (the median is kept)")
    parser.add_argument("--requests", type=int, default=BURST, help="/mutate requests after each start")
    parser.add_argument("--quick", action="store_true", help="the smallest run: 1 start, 100 objects, 20 requests")
    args = parser.parse_args()
    if args.quick:
        args.objects, args.starts, args.requests = min(args.objects, 100), 1, min(args.requests, 20)
    with tempfile.TemporaryDirectory(prefix="bench-memory-") as tmp:
        workdir = Path(tmp)
        tls = write_self_signed(workdir)
        figures = measure(workdir, tls, args.objects, requests=args.requests, starts=args.starts)
        print(orjson.dumps(figures, option=orjson.OPT_INDENT_2).decode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
