"""Drive one URL with wrk and the POST script; return its figures as a dict.

wrk runs with one thread (`-t1`): on a 2-core machine the server gets one core and the load
generator the other. Latencies come back in microseconds and are reported in milliseconds.
"""
from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
from pathlib import Path
from typing import Any

SCRIPT = Path(__file__).resolve().parent / "wrk" / "post_review.lua"
MARKER = "BENCH_JSON "


class LoadError(RuntimeError):
    """wrk is missing, failed, or printed no figures."""


def wrk_path() -> str:
    path = shutil.which("wrk")
    if not path:
        raise LoadError("wrk not found: install it with `apt-get install -y wrk` (Debian package `wrk`)")
    return path


def wrk_version() -> str:
    result = subprocess.run([wrk_path(), "--version"], capture_output=True, text=True, check=False)
    return (result.stdout or result.stderr).splitlines()[0].strip() if (result.stdout or result.stderr) else "?"


def wrk_argv(url: str, body_file: Path, connections: int, seconds: int) -> list[str]:
    return [wrk_path(), "-t1", f"-c{connections}", f"-d{seconds}s", "--timeout", "5s",
            "-s", str(SCRIPT), url, "--", str(body_file)]


def parse_figures(stdout: str) -> dict[str, Any]:
    for line in stdout.splitlines():
        if line.startswith(MARKER):
            raw = json.loads(line[len(MARKER):])
            lat = raw.pop("latency_us")
            raw["latency_ms"] = {k: round(v / 1000.0, 3) for k, v in lat.items()}
            raw["error_count"] = sum(raw["errors"].values())
            return raw
    raise LoadError(f"wrk printed no figures:\n{stdout[-2000:]}")


def run_wrk(url: str, body_file: Path, connections: int, seconds: int,
            cpus: set[int] | None = None) -> dict[str, Any]:
    """Run wrk against `url` for `seconds` with `connections` open connections."""
    argv = wrk_argv(url, body_file, connections, seconds)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = subprocess.run(
        argv, capture_output=True, text=True, check=False, timeout=seconds + 30,
        preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None,
    )
    if result.returncode != 0:
        raise LoadError(f"wrk exited {result.returncode}: {result.stderr.strip()[-2000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    figures = parse_figures(result.stdout)
    # Share of one core the load generator used: well below 1.0 means wrk was not the bottleneck.
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    figures["wrk_cpu_share"] = round(cpu / figures["duration_s"], 3) if figures["duration_s"] else None
    return figures
