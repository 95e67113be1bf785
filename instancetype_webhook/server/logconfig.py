"""How the server's log is configured: JSON lines on stdout, the review lines (written by
instancetype_webhook.server.reviewlog) kept in order with the others."""
from __future__ import annotations

import logging
import sys
from typing import Any

import orjson

from instancetype_webhook.server.reviewlog import (
    REVIEW_LOGGER,
    flush_reviews,
    has_pending,
    set_allowed_sampling,
    set_sink,
)

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


class _OrderedHandler(logging.StreamHandler):
    """Writes pending review lines first, so that the log keeps the order things happened in."""

    def emit(self, record: logging.LogRecord) -> None:
        if has_pending():
            flush_reviews()
        super().emit(record)


def configure(level: str, log_allowed: int) -> None:
    """JSON lines on stdout at `level`; 1 in `log_allowed` allowed reviews that change nothing get a review
    line (1: every one, 0: none; every one at level debug). Both come from the run settings
    (`ServerSettings.log_level`, `.log_allowed`), the one reader of the environment."""
    set_allowed_sampling(1 if level.upper() == "DEBUG" else log_allowed)
    handler = _OrderedHandler(sys.stdout)
    handler.setFormatter(JSONFormatter())
    root = logging.getLogger("instancetype_webhook")
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    root.propagate = False
    # Review lines skip the logging machinery (record, handler lock, formatter: ~15 us a review):
    # one orjson line written straight to stdout (instancetype_webhook.server.reviewlog).
    set_sink(getattr(sys.stdout, "buffer", None) if log.isEnabledFor(logging.INFO) else None)
