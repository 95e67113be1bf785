"""Turn raw runs into the ratios, the verdicts on the targets, a printed table and a JSON file."""
from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import orjson

# The targets: ratios at concurrency 16 over plain HTTP, p99 of ours there, memory, start-up.
RATIO_TARGETS = {"mutate": 0.5, "validate": 0.6}
TARGET_CONCURRENCY, TARGET_TRANSPORT = 16, "plain"
P99_MAX_MS = 10.0
RSS_MAX_BYTES = 150 * 1024 * 1024
READY_MAX_S = 2.0
MiB = 1024 * 1024


def add_ratios(runs: list[dict[str, Any]]) -> None:
    """Set `ratio_to_floor` on every run that has a floor run of the same transport and concurrency."""
    floors = {(r["transport"], r["concurrency"]): r for r in runs if r["target"] == "floor" and "requests_per_s" in r}
    for run in runs:
        floor = floors.get((run["transport"], run["concurrency"]))
        if floor and "requests_per_s" in run and floor["requests_per_s"] > 0:
            run["ratio_to_floor"] = round(run["requests_per_s"] / floor["requests_per_s"], 3)
        # The same ratio from CPU time per request: what req/s would give if both had a whole core.
        mine, base = run.get("server_cpu_us_per_request"), (floor or {}).get("server_cpu_us_per_request")
        if mine and base:
            run["cpu_ratio_to_floor"] = round(base / mine, 3)


def _find(runs: list[dict[str, Any]], target: str) -> dict[str, Any] | None:
    for run in runs:
        if (run["target"], run["transport"], run["concurrency"]) == (target, TARGET_TRANSPORT, TARGET_CONCURRENCY):
            return run
    return None


def _verdict(name: str, measured: float | None, limit: float, at_least: bool) -> dict[str, Any]:
    ok = None if measured is None else (measured >= limit if at_least else measured <= limit)
    return {"name": name, "measured": measured, "limit": limit, "at_least": at_least, "met": ok}


def verdicts(runs: list[dict[str, Any]], memory: dict[str, Any] | None) -> list[dict[str, Any]]:
    out = []
    for target, limit in RATIO_TARGETS.items():
        run = _find(runs, target) or {}
        out.append(_verdict(f"/{target} req/s vs floor (c{TARGET_CONCURRENCY}, plain)", run.get("ratio_to_floor"),
                            limit, True))
        p99 = (run.get("latency_ms") or {}).get("p99")
        out.append(_verdict(f"/{target} p99 ms (c{TARGET_CONCURRENCY}, plain)", p99, P99_MAX_MS, False))
    if memory:
        big = memory.get("generated") or {}
        rss = big.get("rss_after_requests_bytes")
        out.append(_verdict(f"RSS MiB with {big.get('objects', '?')} cached objects",
                            None if rss is None else round(rss / MiB, 1), RSS_MAX_BYTES / MiB, False))
        ready = (memory.get("bundled") or {}).get("ready_s")
        out.append(_verdict("ready s with the bundled catalogue", ready, READY_MAX_S, False))
    return out


def _fmt(value: Any, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def table(runs: list[dict[str, Any]]) -> str:
    lines = [f"{'transport':<9} {'conc':>4} {'target':<9} {'req/s':>9} {'p50 ms':>7} {'p99 ms':>7} "
             f"{'ours/floor':>10} {'errors':>6} {'cpu us/req':>10} {'cpu ratio':>9} {'cpu srv/wrk':>11}"]
    for run in runs:
        lat = run.get("latency_ms") or {}
        lines.append(
            f"{run['transport']:<9} {run['concurrency']:>4} {run['target']:<9} "
            f"{_fmt(run.get('requests_per_s'), '9.0f')} "
            f"{_fmt(lat.get('p50'), '7.2f')} {_fmt(lat.get('p99'), '7.2f')} "
            f"{_fmt(run.get('ratio_to_floor') if run['target'] != 'floor' else None, '10.2f')} "
            f"{_fmt(run.get('error_count'), '6d')} {_fmt(run.get('server_cpu_us_per_request'), '10.0f')} "
            f"{_fmt(run.get('cpu_ratio_to_floor') if run['target'] != 'floor' else None, '9.2f')} "
            f"{_fmt(run.get('server_cpu_share'), '5.2f')}/{_fmt(run.get('wrk_cpu_share'), '<5.2f')}"
            + (f"  ERROR: {run['error']}" if run.get("error") else "")
        )
    return "\n".join(lines)


def verdict_lines(items: list[dict[str, Any]]) -> str:
    lines = []
    for item in items:
        sign = ">=" if item["at_least"] else "<="
        state = {True: "met", False: "MISSED", None: "not measured"}[item["met"]]
        lines.append(f"  {item['name']:<44} {_fmt(item['measured'], '')!s:>8}  "
                     f"(target {sign} {item['limit']:g})  {state}")
    return "\n".join(lines)


def write_results(results: dict[str, Any], directory: Path, label: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    path = directory / f"{stamp}-{label}.json"
    path.write_bytes(orjson.dumps(results, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n")
    return path
