"""One JSON line per review: identifiers and the verdict only, never the object (cloud-init user data
can hold secrets)."""
from __future__ import annotations

import asyncio
import logging
import sys
import threading
import time
from collections.abc import Mapping
from typing import Any

import orjson

REVIEW_LOGGER = "instancetype_webhook.review"
log = logging.getLogger(REVIEW_LOGGER)


class JSONFormatter(logging.Formatter):
    """Records whose `msg` is a dict are written as that JSON object; others as {level, logger, msg}."""

    def format(self, record: logging.LogRecord) -> str:
        if isinstance(record.msg, dict):
            return orjson.dumps(record.msg).decode()
        line: dict[str, Any] = {"ts": round(record.created, 3), "level": record.levelname.lower(),
                                "logger": record.name, "msg": record.getMessage()}
        if record.exc_info:
            line["exc"] = self.formatException(record.exc_info)
        return orjson.dumps(line).decode()


_sink: Any = None  # a binary stream review lines go to directly (set by configure), or None
_pending: list[bytes] = []  # review lines written in this event-loop step, not yet on the sink
_lock = threading.Lock()  # other threads log too (watches, TLS reload): they flush pending lines first


class _OrderedHandler(logging.StreamHandler):
    """Writes pending review lines first, so that the log keeps the order things happened in."""

    def emit(self, record: logging.LogRecord) -> None:
        if _pending:
            flush_reviews()
        super().emit(record)


def configure(level: str = "info") -> None:
    global _sink
    flush_reviews()
    handler = _OrderedHandler(sys.stdout)
    handler.setFormatter(JSONFormatter())
    root = logging.getLogger("instancetype_webhook")
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    root.propagate = False
    # Review lines skip the logging machinery (record, handler lock, formatter: ~15 us a review):
    # one orjson line written straight to stdout. Inside the event loop the lines of one loop step
    # are written together at the end of that step (one write system call for all the reviews
    # answered in it, instead of one each); outside a loop at once.
    _sink = getattr(sys.stdout, "buffer", None) if log.isEnabledFor(logging.INFO) else None


def review_line(endpoint: str, request: Mapping[str, Any] | None, allowed: bool | None, patch_ops: int,
                seconds: float, outcome: str, policy: str = "", status: int = 200, error: str = "") -> dict[str, Any]:
    request = request or {}
    obj = found if type(found := request.get("object")) is dict else request.get("oldObject")
    meta = found if type(obj) is dict and type(found := obj.get("metadata")) is dict else {}
    gvk = found if type(found := request.get("kind")) is dict else {}
    line: dict[str, Any] = {
        "ts": round(time.time(), 3), "msg": "review", "endpoint": endpoint, "uid": request.get("uid"),
        "kind": gvk.get("kind"), "namespace": request.get("namespace") or meta.get("namespace"),
        "name": request.get("name") or meta.get("name") or meta.get("generateName"),
        "operation": request.get("operation"), "dryRun": bool(request.get("dryRun", False)),
        "allowed": allowed, "patchOps": patch_ops, "durationMs": round(seconds * 1000, 3),
        "outcome": outcome, "httpStatus": status,
    }
    if policy:
        line["policy"] = policy
    if error:
        line["error"] = error[:200]
    return line


def log_review(line: dict[str, Any]) -> None:
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
        sink = _sink
        if data and sink is not None:
            sys.stdout.flush()  # keep order with lines written through logging
            sink.write(data)
            sink.flush()
