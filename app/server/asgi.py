"""The ASGI app uvicorn runs, and the review path it answers /mutate and /validate on, with no framework.

POST /mutate and /validate: the body read from the ASGI messages (capped), decoded once with orjson,
answered by the handler (inline, or in a worker thread under the review deadline when the reference source
may call a remote API), counted, logged and sent as bytes. Everything else goes to the FastAPI app
(app.server.app), which also declares the two endpoints for the OpenAPI document. This module is part of
the compiled build (app/compiled.py); the FastAPI wiring is not (FastAPI reads its endpoints' signatures).
"""
from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import orjson
from starlette.concurrency import run_in_threadpool

from app.kubevirt.causes import Verdict
from app.kubevirt.source import CacheMiss
from app.server import review as rv
from app.server.context import Outcome, ReviewContext
from app.server.logs import log_review, review_line
from app.server.metrics import Metrics
from app.server.mutate import mutate
from app.server.validate import validate

log = logging.getLogger("instancetype_webhook.server")
Handler = Callable[[rv.Review, ReviewContext], Outcome]


class BodyTooLarge(Exception):
    pass


@dataclass
class Webhook:
    """Server state shared by the endpoints."""

    ctx: ReviewContext
    metrics: Metrics = field(default_factory=Metrics)
    max_body_bytes: int = 8 * 1024 * 1024
    max_json_depth: int = 200
    deadline: float = 8.0
    deadline_action: str = "deny"
    offload: bool = False
    ready: Callable[[], bool] = lambda: True
    draining: bool = False
    configuration_status: Callable[[], str] = lambda: "KubeVirt's defaults"  # which cluster configuration is in use

    def is_ready(self) -> bool:
        return not self.draining and bool(self.ready())


def _late(review: rv.Review, hook: Webhook, kind: str) -> Outcome:
    message = f"review not answered within the {hook.deadline:g}s deadline (a reference lookup is slow)"
    return _unanswered(review, hook, kind, message)


def _unanswered(review: rv.Review, hook: Webhook, kind: str, message: str) -> Outcome:
    """A live lookup hung or failed: --deadline-action decides (deny with the reason, or allow with it
    as a warning)."""
    if hook.deadline_action == "allow":
        return Outcome(True, rv.response(review, Verdict.allow([message])), kind, "deadline")
    return Outcome(False, rv.response(review, rv.deny(message, 504)), kind, "deadline")


def _crashed(review: rv.Review, kind: str, exc: BaseException) -> Outcome:
    message = f"internal error while reviewing: {type(exc).__name__}"
    return Outcome(False, rv.response(review, rv.deny(message, 500)), kind, "error")


async def review_answer(body: Callable[[], Awaitable[bytes]], hook: Webhook, endpoint: str,
                        handler: Handler) -> tuple[int, bytes]:
    """(HTTP status, JSON bytes) for one review; `body()` reads the request body (BodyTooLarge past the cap)."""
    start = time.perf_counter()
    metrics = hook.metrics
    metrics.in_flight += 1
    parsed: rv.AdmissionRequest | None = None
    try:
        try:
            review = rv.parse_review(await body(), hook.max_json_depth)
        except BodyTooLarge:
            return _reject(hook, endpoint, start, 413, f"request body larger than {hook.max_body_bytes} bytes")
        except rv.ReviewError as exc:
            return _reject(hook, endpoint, start, 400, str(exc), exc.field)
        parsed = review["request"]
        kind = review["request"]["kind"].get("kind", "")
        try:
            if hook.offload:
                outcome = await offloaded(handler, review, hook)
            else:
                outcome = handler(review, hook.ctx)
        except TimeoutError:
            metrics.error(endpoint, "deadline")
            outcome = _late(review, hook, kind)
        except Exception as failure:  # a bug must still answer the API server, with a reason
            unavailable = getattr(failure, "admission_message", None)  # the live source could not answer
            if unavailable:
                log.warning("review %s: %s", review["request"]["uid"], unavailable)
                metrics.error(endpoint, "unavailable")
                outcome = _unanswered(review, hook, kind, unavailable)
            else:
                log.exception("review %s failed", review["request"]["uid"])
                metrics.error(endpoint, "exception")
                outcome = _crashed(review, kind, failure)
        seconds = time.perf_counter() - start
        metrics.observe(endpoint, review["request"]["operation"], kind, outcome.outcome, seconds)
        if not outcome.allowed:
            metrics.denied(endpoint, outcome.body)
        log_review(review_line(endpoint, parsed, outcome.allowed, outcome.patch_ops, seconds, outcome.outcome,
                               outcome.policy))
        return 200, outcome.body
    finally:
        metrics.in_flight -= 1


async def offloaded(handler: Handler, review: rv.Review, hook: Webhook) -> Outcome:
    """The answer of a handler whose source may call the API server: inline when the source's caches
    answer everything (no thread hop: the common case once synced), else in a worker thread under the
    review deadline (asyncio.TimeoutError past it)."""
    cache_only = getattr(hook.ctx.source, "cache_only", None)
    if cache_only is not None:
        try:
            with cache_only():
                return handler(review, hook.ctx)
        except CacheMiss:
            pass
    return await asyncio.wait_for(run_in_threadpool(handler, review, hook.ctx), hook.deadline)


def _reject(hook: Webhook, endpoint: str, start: float, status: int, message: str,
            field: str = "") -> tuple[int, bytes]:
    seconds = time.perf_counter() - start
    hook.metrics.error(endpoint, "too_large" if status == 413 else "bad_request")
    hook.metrics.observe(endpoint, "", "", "rejected", seconds)
    log_review(review_line(endpoint, None, None, 0, seconds, "rejected", status=status, error=message))
    return status, orjson.dumps({"error": message, "field": field})


class ClientGone(Exception):
    """The client disconnected before sending the whole body."""


async def asgi_body(scope: dict[str, Any], receive: Callable[[], Awaitable[dict[str, Any]]], cap: int) -> bytes:
    """The request body straight from ASGI messages; BodyTooLarge as soon as it passes `cap`."""
    for name, value in scope.get("headers") or ():
        if name == b"content-length" and value.isdigit() and int(value) > cap:
            raise BodyTooLarge
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientGone
        chunk = message.get("body", b"")
        if chunk:
            size += len(chunk)
            if size > cap:
                raise BodyTooLarge
            chunks.append(chunk)
        if not message.get("more_body", False):
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)


class AdmissionApp:
    """The ASGI app uvicorn runs: POST /mutate and /validate are answered here directly, with no
    routing, Request object or dependency machinery (the framework costs about twice our own work per
    review); everything else (preview, health, OpenAPI, 404/405) goes to the FastAPI app, which also
    declares /mutate and /validate so the OpenAPI document describes them. Attribute access (state,
    openapi(), routes) is forwarded to the FastAPI app."""

    def __init__(self, api: Any, hook: Webhook):  # api: the FastAPI app (app.server.app.create_api)
        self.api, self.hook = api, hook
        self.fast: dict[str, tuple[str, Handler]] = {"/mutate": ("mutate", mutate), "/validate": ("validate", validate)}

    def __getattr__(self, name: str) -> Any:
        return getattr(self.api, name)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        route = self.fast.get(scope.get("path", "")) if scope["type"] == "http" and scope["method"] == "POST" else None
        if route is None:
            return await self.api(scope, receive, send)
        try:
            status, body = await review_answer(lambda: asgi_body(scope, receive, self.hook.max_body_bytes),
                                               self.hook, *route)
        except ClientGone:
            return
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]})
        await send({"type": "http.response.body", "body": body})
