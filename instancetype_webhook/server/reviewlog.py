"""The review log: one JSON line per review, identifiers and the verdict only, never the object (cloud-init
user data can hold secrets), written straight to stdout without the logging machinery.

Which reviews get a line is a choice (`set_allowed_sampling`, from `serve --log-allowed N`, default 100): refusals,
errors, deadlines, rejected bodies and patches always; the allowed reviews that change nothing (outcomes
`allowed` and `skipped`) 1 in N, their line carrying `"sampled": N` (N = 1: every one, 0: none).

Part of the compiled build (compiled.py): it runs once per review. instancetype_webhook.server.logconfig configures it
(`set_sink`) and keeps the other log lines in order with it (`flush_reviews` before each of theirs).
"""
from __future__ import annotations

import asyncio
import logging
import sys
import threading
import time
from collections.abc import Mapping
from typing import Any, Final

import orjson

REVIEW_LOGGER: Final = "instancetype_webhook.review"
log = logging.getLogger(REVIEW_LOGGER)

_sink: Any = None  # a binary stream review lines go to directly (set by logconfig.configure), or None
_pending: list[bytes] = []  # review lines written in this event-loop step, not yet on the sink
_lock = threading.Lock()  # other threads log too (watches, TLS reload): they flush pending lines first
SAMPLED: Final = frozenset({"allowed", "skipped"})  # the outcomes whose lines are sampled (nothing refused or changed)
_every = 1  # 1 in _every sampled reviews gets a line (0: none)
_seen = 0  # sampled reviews since the last one logged, modulo _every


def set_allowed_sampling(every: int) -> None:
    """Log 1 in `every` allowed reviews that change nothing (1: every one, 0: none); the others always."""
    global _every, _seen
    if every < 0:
        raise ValueError(f"the allowed reviews' sampling is 1 in N with N >= 0, not {every}")
    _every, _seen = every, 0


def allowed_sampling() -> int:
    return _every


def line_weight(outcome: str) -> int:
    """How many reviews this one's line stands for: 1 (not sampled, or sampled 1 in 1), N (the one logged
    of N allowed reviews), or 0 (left out: no line). Called once per review, in the event loop."""
    global _seen
    every = _every
    if every == 1 or outcome not in SAMPLED:
        return 1
    if every == 0:
        return 0
    seen, _seen = _seen, (_seen + 1) % every
    return every if seen == 0 else 0


def set_sink(sink: Any) -> None:
    """Where review lines go from now on (a binary stream, written and flushed once per loop step), or None
    (through the `instancetype_webhook.review` logger). Pending lines go to the old sink first."""
    global _sink
    flush_reviews()
    _sink = sink


def sink() -> Any:
    return _sink


def has_pending() -> bool:
    return bool(_pending)


def review_line(endpoint: str, request: Mapping[str, Any] | None, allowed: bool | None, patch_ops: int,
                seconds: float, outcome: str, policy: str = "", status: int = 200, error: str = "") -> dict[str, Any]:
    request = request or {}
    obj = found if type(found := request.get("object")) is dict else request.get("oldObject")
    meta = found if type(obj) is dict and type(found := obj.get("metadata")) is dict else {}
    gvk = found if type(found := request.get("kind")) is dict else {}
    # to the millisecond and microsecond by integer division: round(x, 3) costs several times as much
    line: dict[str, Any] = {
        "ts": time.time_ns() // 1_000_000 / 1000, "msg": "review", "endpoint": endpoint, "uid": request.get("uid"),
        "kind": gvk.get("kind"), "namespace": request.get("namespace") or meta.get("namespace"),
        "name": request.get("name") or meta.get("name") or meta.get("generateName"),
        "operation": request.get("operation"), "dryRun": bool(request.get("dryRun", False)),
        "allowed": allowed, "patchOps": patch_ops, "durationMs": int(seconds * 1_000_000) / 1000,
        "outcome": outcome, "httpStatus": status,
    }
    if policy:
        line["policy"] = policy
    if error:
        line["error"] = error[:200]
    return line


def log_review(line: dict[str, Any]) -> None:
    """Inside the event loop the lines of one loop step are written together at the end of that step (one
    write system call for all the reviews answered in it); outside a loop at once."""
    if _sink is None:
        if log.isEnabledFor(logging.INFO):
            log.info(line)
        return
    data = orjson.dumps(line, option=orjson.OPT_APPEND_NEWLINE)
    with _lock:
        _pending.append(data)
        first = len(_pending) == 1
    if first:
        loop = asyncio._get_running_loop()  # None outside a loop (the public getter raises instead)
        if loop is None:
            flush_reviews()
        else:
            loop.call_soon(flush_reviews)


def flush_reviews() -> None:
    """Write the pending review lines to the sink (one write) and flush it."""
    with _lock:
        data = b"".join(_pending)
        _pending.clear()
        out = _sink
        if data and out is not None:
            sys.stdout.flush()  # keep order with lines written through logging
            out.write(data)
            out.flush()
