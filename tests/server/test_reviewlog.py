"""The review log: one JSON line per review, written once per event-loop step, in order with other log lines."""
from __future__ import annotations

import asyncio
import io
import logging
import sys
from collections.abc import Iterator

import orjson
import pytest

from instancetype_webhook.server import logconfig, reviewlog


class Stdout(io.TextIOWrapper):
    def __init__(self) -> None:
        self.raw_bytes = io.BytesIO()
        super().__init__(self.raw_bytes, encoding="utf-8", write_through=True)
        self.flushes = 0

    def lines(self) -> list[dict]:
        self.flush()
        return [orjson.loads(line) for line in self.raw_bytes.getvalue().splitlines()]


@pytest.fixture
def stdout(monkeypatch: pytest.MonkeyPatch, app_logging: logging.Logger) -> Stdout:
    """logconfig.configure() onto a stdout of the test's own; afterwards the logger is as it was (`app_logging`)."""
    out = Stdout()
    monkeypatch.setattr(sys, "stdout", out)
    logconfig.configure("info", 1)
    return out


def line(uid: str) -> dict:
    return reviewlog.review_line("mutate", {"uid": uid, "operation": "CREATE"}, True, 0, 0.001, "allowed")


def test_outside_a_loop_a_line_is_written_at_once(stdout: Stdout):
    reviewlog.log_review(line("a"))
    assert [entry["uid"] for entry in stdout.lines()] == ["a"]


def test_lines_of_one_loop_step_are_written_together_at_its_end(stdout: Stdout):
    seen: list[int] = []

    async def main() -> None:
        reviewlog.log_review(line("a"))
        reviewlog.log_review(line("b"))
        seen.append(len(stdout.raw_bytes.getvalue()))
        await asyncio.sleep(0)
        await asyncio.sleep(0)

    asyncio.run(main())
    assert seen == [0]
    assert [entry["uid"] for entry in stdout.lines()] == ["a", "b"]


def test_other_log_lines_keep_their_place(stdout: Stdout):
    async def main() -> None:
        reviewlog.log_review(line("a"))
        logging.getLogger("instancetype_webhook.server").warning("after a")
        reviewlog.log_review(line("b"))
        await asyncio.sleep(0)

    asyncio.run(main())
    assert [entry.get("uid") or entry["msg"] for entry in stdout.lines()] == ["a", "after a", "b"]


def test_the_logger_is_left_as_it_was_after_the_tests_above():
    """Runs after the tests that configure the log (file order): no handler of theirs is left behind."""
    logger = logging.getLogger("instancetype_webhook")
    assert not any(isinstance(h, logconfig._OrderedHandler) for h in logger.handlers)
    assert logger.propagate and reviewlog.sink() is None


@pytest.fixture
def sampling() -> Iterator[None]:
    yield
    reviewlog.set_allowed_sampling(1)


def test_one_in_n_allowed_reviews_gets_a_line_standing_for_n(sampling: None):
    reviewlog.set_allowed_sampling(4)
    weights = [reviewlog.line_weight("allowed") for _ in range(8)]
    assert weights == [4, 0, 0, 0, 4, 0, 0, 0]
    assert [reviewlog.line_weight(o) for o in ("denied", "patched", "deadline", "error", "rejected")] == [1] * 5
    assert [reviewlog.line_weight("skipped"), reviewlog.line_weight("allowed")] == [4, 0]  # one count for both
    reviewlog.set_allowed_sampling(0)
    assert [reviewlog.line_weight("allowed"), reviewlog.line_weight("skipped"), reviewlog.line_weight("denied")] \
        == [0, 0, 1]
    reviewlog.set_allowed_sampling(1)
    assert {reviewlog.line_weight("allowed") for _ in range(3)} == {1}
    with pytest.raises(ValueError, match="N >= 0"):
        reviewlog.set_allowed_sampling(-1)
