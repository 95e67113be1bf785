"""A description of the machine and software a benchmark ran on, stored with every result."""
from __future__ import annotations

import datetime as dt
import os
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

PACKAGES = ("instancetype-webhook", "fastapi", "starlette", "pydantic", "pydantic-core", "uvicorn",
            "uvloop", "httptools", "orjson", "jsonpatch", "prometheus-client", "PyYAML")
ROOT = Path(__file__).resolve().parent.parent


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def package_versions(names: tuple[str, ...] = PACKAGES) -> dict[str, str | None]:
    versions: dict[str, str | None] = {}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def git_revision() -> str | None:
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "instancetype_webhook", "bench"], cwd=ROOT,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return head + ("+dirty" if dirty else "")


def memory_total_bytes() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def describe(wrk_version: str | None = None) -> dict[str, Any]:
    return {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "cpu_model": cpu_model(),
        "cores": os.cpu_count(),
        "memory_bytes": memory_total_bytes(),
        "load_average_at_start": list(os.getloadavg()),
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "python_implementation": platform.python_implementation(),
        "packages": package_versions(),
        "wrk": wrk_version,
        "git": git_revision(),
    }
