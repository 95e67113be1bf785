"""The ASGI app uvicorn runs, and the review path it answers /mutate and /validate on, with no framework.

POST /mutate and /validate: the body read from the ASGI messages (capped), decoded once with orjson,
answered by the handler (inline, or in a worker thread under the review deadline when the reference source
may call a remote API), counted, logged and sent as bytes. `review_now` is that answer without awaiting
anything (or a Deferred that `review_later` completes in a worker thread): the HTTP protocol
(instancetype_webhook.server.transport) calls it straight from the parser for a review, uvicorn's ASGI cycle is the way
for everything else and for what the protocol hands on (see there). Everything else goes to the FastAPI app
(server.app), which also declares the two endpoints for the OpenAPI document. This module is part of
the compiled build (compiled.py); the FastAPI wiring is not (FastAPI reads its endpoints' signatures).
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

from instancetype_webhook.kubevirt.causes import Verdict
from instancetype_webhook.kubevirt.source import CacheMiss
from instancetype_webhook.server import review as rv
from instancetype_webhook.server.context import Outcome, ReviewContext
from instancetype_webhook.server.metrics import Metrics
from instancetype_webhook.server.mutate import mutate
from instancetype_webhook.server.reviewlog import log_review, review_line
from instancetype_webhook.server.validate import validate

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


@dataclass
class Deferred:
    """A parsed review whose handler needs a worker thread (a reference the caches do not hold): what
    `review_now` hands on to `review_later`."""

    review: rv.Review
    start: float


def review_now(body: bytes | None, hook: Webhook, endpoint: str, handler: Handler,
               start: float | None = None) -> tuple[int, bytes] | Deferred:
    """(HTTP status, JSON bytes) for one review, answered on this thread; `body` None: it was larger than
    the cap. A Deferred when the handler must run in a worker thread: `review_later` answers it."""
    start = time.perf_counter() if start is None else start
    metrics = hook.metrics
    metrics.in_flight += 1
    deferred = False
    try:
        if body is None:
            return _reject(hook, endpoint, start, 413, f"request body larger than {hook.max_body_bytes} bytes")
        try:
            review = rv.parse_review(body, hook.max_json_depth)
        except rv.ReviewError as exc:
            return _reject(hook, endpoint, start, 400, str(exc), exc.field)
        try:
            outcome = handler(review, hook.ctx) if not hook.offload else _from_caches(handler, review, hook)
        except Exception as failure:  # a bug must still answer the API server, with a reason
            outcome = _failed(review, hook, endpoint, failure)
        if outcome is None:
            deferred = True
            return Deferred(review, start)
        return _answered(review, hook, endpoint, outcome, start)
    finally:
        if not deferred:
            metrics.in_flight -= 1


async def review_later(deferred: Deferred, hook: Webhook, endpoint: str, handler: Handler) -> tuple[int, bytes]:
    """The answer to a Deferred review: its handler in a worker thread, under the review deadline."""
    review = deferred.review
    try:
        try:
            outcome = await _in_thread(handler, review, hook)
        except Exception as failure:  # the deadline (TimeoutError), an unavailable API server, or a bug
            outcome = _failed(review, hook, endpoint, failure)
        return _answered(review, hook, endpoint, outcome, deferred.start)
    finally:
        hook.metrics.in_flight -= 1


async def review_answer(body: Callable[[], Awaitable[bytes]], hook: Webhook, endpoint: str,
                        handler: Handler) -> tuple[int, bytes]:
    """(HTTP status, JSON bytes) for one review; `body()` reads the request body (BodyTooLarge past the cap)."""
    start = time.perf_counter()
    try:
        data: bytes | None = await body()
    except BodyTooLarge:
        data = None
    now = review_now(data, hook, endpoint, handler, start)
    return await review_later(now, hook, endpoint, handler) if isinstance(now, Deferred) else now


def _failed(review: rv.Review, hook: Webhook, endpoint: str, failure: Exception) -> Outcome:
    """The answer when the handler raised: past the deadline, the live source unavailable, or a bug."""
    kind = review["request"]["kind"].get("kind", "")
    if isinstance(failure, TimeoutError):
        hook.metrics.error(endpoint, "deadline")
        return _late(review, hook, kind)
    unavailable = getattr(failure, "admission_message", None)  # the live source could not answer
    if unavailable:
        log.warning("review %s: %s", review["request"]["uid"], unavailable)
        hook.metrics.error(endpoint, "unavailable")
        return _unanswered(review, hook, kind, unavailable)
    log.error("review %s failed", review["request"]["uid"], exc_info=failure)
    hook.metrics.error(endpoint, "exception")
    return _crashed(review, kind, failure)


def _answered(review: rv.Review, hook: Webhook, endpoint: str, outcome: Outcome, start: float) -> tuple[int, bytes]:
    """Count and log a handled review; its HTTP answer."""
    seconds = time.perf_counter() - start
    request = review["request"]
    metrics = hook.metrics
    metrics.observe(endpoint, request["operation"], request["kind"].get("kind", ""), outcome.outcome, seconds)
    if not outcome.allowed:
        metrics.denied(endpoint, outcome.body)
    log_review(review_line(endpoint, request, outcome.allowed, outcome.patch_ops, seconds, outcome.outcome,
                           outcome.policy))
    return 200, outcome.body


def _from_caches(handler: Handler, review: rv.Review, hook: Webhook) -> Outcome | None:
    """The handler's answer when the source's caches hold everything it looks up (no thread hop: the
    common case once synced); None when it needs a live lookup, or the source has no cache-only mode."""
    cache_only = getattr(hook.ctx.source, "cache_only", None)
    if cache_only is None:
        return None
    try:
        with cache_only():
            return handler(review, hook.ctx)
    except CacheMiss:
        return None


async def _in_thread(handler: Handler, review: rv.Review, hook: Webhook) -> Outcome:
    return await asyncio.wait_for(run_in_threadpool(handler, review, hook.ctx), hook.deadline)


async def offloaded(handler: Handler, review: rv.Review, hook: Webhook) -> Outcome:
    """The answer of a handler whose source may call the API server: inline when the source's caches
    answer everything, else in a worker thread under the review deadline (asyncio.TimeoutError past it)."""
    outcome = _from_caches(handler, review, hook)
    return outcome if outcome is not None else await _in_thread(handler, review, hook)


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

    def __init__(self, api: Any, hook: Webhook):  # api: the FastAPI app (instancetype_webhook.server.app.create_api)
        self.api, self.hook = api, hook
        self.fast: dict[str, tuple[str, Handler]] = {"/mutate": ("mutate", mutate), "/validate": ("validate", validate)}
        # the same routes by raw request path, for the HTTP protocol's direct answers
        # (instancetype_webhook.server.transport)
        self.direct: dict[bytes, tuple[str, Handler]] = {path.encode(): route for path, route in self.fast.items()}

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
