"""A review whose source may call the API server: answered on the event loop when the caches suffice,
in a worker thread (under the deadline) when they do not; the answer is the same either way."""
from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from instancetype_webhook.admission.context import ReviewContext, ReviewReply
from instancetype_webhook.server.asgi import Webhook, offloaded
from tests.kit.live_source import LiveSource


def handler(review: dict[str, Any], ctx: ReviewContext) -> ReviewReply:
    try:
        found = ctx.source.get(review["name"])
    except Exception:  # a handler's own broad except must not swallow the cache miss
        found = "swallowed"
    return ReviewReply(True, f"{found} on {threading.current_thread().name}".encode(), "VM", "allowed")


def answer(source: LiveSource, name: str, deadline: float = 5.0) -> str:
    hook = Webhook(ctx=ReviewContext(source=source), offload=True, deadline=deadline)
    return asyncio.run(offloaded(handler, {"name": name}, hook)).body.decode()


def test_cached_references_are_answered_on_the_event_loop():
    source = LiveSource({"u1.medium"})
    assert answer(source, "u1.medium") == "u1.medium on MainThread"
    assert source.fetches == 0


def test_a_cache_miss_moves_to_a_worker_thread_and_fetches():
    source = LiveSource(set())
    body = answer(source, "new-type")
    assert body.startswith("new-type on ") and not body.endswith("MainThread")
    assert source.fetches == 1


def test_a_slow_fetch_still_meets_the_deadline():
    with pytest.raises(asyncio.TimeoutError):
        answer(LiveSource(set(), fetch_seconds=2.0), "slow", deadline=0.2)


def test_sources_without_a_cache_only_mode_always_use_a_thread():
    class Plain:
        def get(self, name: str) -> str:
            return name

    hook = Webhook(ctx=ReviewContext(source=Plain()), offload=True)  # type: ignore[arg-type]  # a stub source
    body = asyncio.run(offloaded(handler, {"name": "x"}, hook)).body.decode()
    assert not body.endswith("MainThread")
