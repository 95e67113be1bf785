"""Where the start of `serve --kubeconfig` goes with a big cluster: 10,000 instance types and preferences
(plus the bundled catalogue) in the strict fake API server (bench/fake_cluster.py, its own process).

1. stages, in this process, one kind after the other, as the informers do them, for both lists: the
   consistent list in pages of LIST_PAGE (`stages`) and the list from the API server's watch cache
   (`resourceVersion=0`, one response: `stages_cache`, what the informers ask first): fetch (HTTP, the
   fake's JSON included), decode (orjson), complete (compact + kind), per kind;
2. the ClusterSource: start() to wait_synced() (the informers in parallel threads);
3. the shipped server: spawn to the first 200 on /readyz, and its RSS then (median of `--starts`), with
   how its informers listed (`lists`: from the cache or from etcd, counted in its log);
and the machine's load average (1, 5, 15 minutes) before and after.

Run: python bench/cluster_start.py [--objects 10000] [--starts 3]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

BENCH = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH), str(BENCH.parent)]

from servers import HOST, Server, free_port  # noqa: E402  (after the sys.path set-up)
from targets import ROOT, serve_argv  # noqa: E402  (after the sys.path set-up)
from tlsfiles import write_self_signed  # noqa: E402  (after the sys.path set-up)

from instancetype_webhook.sources import cluster  # noqa: E402  (after the sys.path set-up)


def start_fake(objects: int) -> tuple[subprocess.Popen, dict[str, Any]]:
    proc = subprocess.Popen([sys.executable, str(BENCH / "fake_cluster.py"), "--objects", str(objects), "--vms", "0"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    return proc, json.loads(proc.stdout.readline())


def stages(kubeconfig: Path, cached: bool = False) -> dict[str, Any]:
    """Seconds per stage and kind, one kind after the other: the paged consistent list, or (`cached`) the one
    from the watch cache."""
    src = cluster.ClusterSource.from_config(kubeconfig=kubeconfig)
    out: dict[str, Any] = {}
    for informer in src.informers.values():
        if not informer.keep:  # its list only gives a resourceVersion: one item, never from the cache
            continue
        fetch = decode = complete = 0.0
        pages = count = 0
        token: str | None = None
        while True:
            t0 = time.perf_counter()
            first = {"resource_version": "0"} if cached else {"limit": cluster.LIST_PAGE}
            resp = informer.lister(_preload_content=False, _request_timeout=(5, 60),
                                   **({"limit": cluster.LIST_PAGE, "_continue": token} if token else first))
            data = resp.data
            resp.release_conn()
            t1 = time.perf_counter()
            doc = orjson.loads(data)
            t2 = time.perf_counter()
            items = [informer._complete(obj) for obj in doc.get("items") or []]
            t3 = time.perf_counter()
            fetch, decode, complete = fetch + t1 - t0, decode + t2 - t1, complete + t3 - t2
            pages, count = pages + 1, count + len(items)
            token = (doc.get("metadata") or {}).get("continue")
            if not token:
                break
        out[informer.name] = {"objects": count, "pages": pages, "fetch_s": round(fetch, 3),
                              "decode_s": round(decode, 3), "complete_s": round(complete, 3)}
    return out


def source_sync(kubeconfig: Path) -> float:
    src = cluster.ClusterSource.from_config(kubeconfig=kubeconfig)
    start = time.perf_counter()
    src.start()
    assert src.wait_synced(120)
    took = time.perf_counter() - start
    src.stop()
    return round(took, 3)


def server_starts(kubeconfig: Path, workdir: Path, starts: int) -> dict[str, Any]:
    tls = write_self_signed(workdir)
    runs = []
    for index in range(starts):
        port = free_port()
        argv = serve_argv(port, tls) + ["--kubeconfig", str(kubeconfig)]
        server = Server(f"start-{index}", argv, f"https://{HOST}:{port}", log_path=workdir / f"start-{index}.log",
                        env={"PYTHONPATH": str(ROOT)})
        with server:
            ready = server.wait_ready(timeout=120)
            runs.append((round(ready, 3), round(server.rss_bytes() / 2**20, 1)))
        lists = re.findall(r"listed \d+ objects at resourceVersion \d+ \((\w+),",
                           (workdir / f"start-{index}.log").read_text(errors="replace"))
    ready_s = [r for r, _ in runs]
    return {"ready_s_median": statistics.median(ready_s), "ready_s": ready_s, "rss_mib_ready": [m for _, m in runs],
            "lists": {where: lists.count(where) for where in sorted(set(lists))}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--objects", type=int, default=10_000)
    parser.add_argument("--starts", type=int, default=3)
    args = parser.parse_args()
    load_before = [round(x, 2) for x in os.getloadavg()]
    proc, info = start_fake(args.objects)
    try:
        with tempfile.TemporaryDirectory(prefix="bench-cluster-start-") as tmp:
            kubeconfig = Path(tmp) / "kubeconfig"
            kubeconfig.write_text(json.dumps(info["kubeconfig"]))
            result = {"objects": args.objects, "page": cluster.LIST_PAGE, "stages": stages(kubeconfig),
                      "stages_cache": stages(kubeconfig, cached=True), "source_sync_s": source_sync(kubeconfig),
                      "server": server_starts(kubeconfig, Path(tmp), args.starts),
                      "load": {"before": load_before, "after": [round(x, 2) for x in os.getloadavg()]}}
    finally:
        assert proc.stdin is not None
        proc.stdin.write("quit\n")
        proc.stdin.close()
        proc.wait(30)
    print(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
