"""server/logconfig.py: JSON lines on stdout (a dict message as it is, anything else as {ts, level, logger,
msg[, exc]}), one ordered handler on the app's logger, and the review sink only while INFO is enabled."""
from __future__ import annotations

import io
import logging
import sys

import orjson
import pytest

from instancetype_webhook.server import logconfig, reviewlog


def record(msg, level: int = logging.INFO, exc_info=None) -> logging.LogRecord:
    return logging.LogRecord("instancetype_webhook.x", level, __file__, 1, msg, None, exc_info)


def test_a_dict_message_is_written_as_that_object():
    line = logconfig.JSONFormatter().format(record({"uid": "u", "allowed": True}))
    assert orjson.loads(line) == {"uid": "u", "allowed": True}


def test_other_messages_carry_level_logger_and_text():
    entry = orjson.loads(logconfig.JSONFormatter().format(record("cache %s", logging.WARNING)))
    assert entry["level"] == "warning" and entry["logger"] == "instancetype_webhook.x"
    assert entry["msg"] == "cache %s" and isinstance(entry["ts"], float) and "exc" not in entry


def test_an_exception_is_written_with_its_traceback():
    try:
        raise ValueError("boom")
    except ValueError:
        entry = orjson.loads(logconfig.JSONFormatter().format(record("failed", logging.ERROR, sys.exc_info())))
    assert "ValueError: boom" in entry["exc"] and entry["level"] == "error"


@pytest.mark.parametrize("level, sink", [("info", True), ("debug", True), ("warning", False)])
def test_configure_installs_one_handler_and_the_sink_only_at_info(level: str, sink: bool, monkeypatch,
                                                                  app_logging: logging.Logger):
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
    monkeypatch.setattr(sys, "stdout", out)
    logconfig.configure(level, 1)
    assert [type(h) for h in app_logging.handlers] == [logconfig._OrderedHandler]
    assert app_logging.level == getattr(logging, level.upper()) and app_logging.propagate is False
    assert (reviewlog.sink() is out.buffer) is sink
    logconfig.configure(level, 1)  # configuring again replaces the handler, never adds one
    assert len(app_logging.handlers) == 1
    logging.getLogger("instancetype_webhook.server").warning("hello")
    out.flush()
    assert orjson.loads(out.buffer.getvalue().splitlines()[-1])["msg"] == "hello"


@pytest.mark.parametrize("level, given, every", [
    ("info", 100, 100), ("info", 1, 1), ("info", 0, 0), ("debug", 100, 1), ("debug", 0, 1), ("warning", 10, 10),
])
def test_configure_sets_the_allowed_reviews_sampling_it_is_given(level: str, given: int, every: int, monkeypatch,
                                                                 app_logging: logging.Logger):
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True))
    # the run settings read the environment; configure takes the number it is given, never the variable
    monkeypatch.setenv("INSTANCETYPE_WEBHOOK_LOG_ALLOWED", "7")
    try:
        logconfig.configure(level, given)
        assert reviewlog.allowed_sampling() == every
    finally:
        reviewlog.set_allowed_sampling(1)
