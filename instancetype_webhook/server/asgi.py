"""The one door of a review: the ASGI app uvicorn runs answers POST /mutate and /validate itself, with no framework.

The body is read from the ASGI messages under the cap (instancetype_webhook.httpbody), decoded once with orjson
(admission.review), decided by the admission layer's handler (inline when the reference source's caches answer
everything, else in a worker thread under the review deadline), counted, logged and sent as bytes. Everything
else (preview, health, the OpenAPI document, the playground, 404/405) goes to the FastAPI app (server.app). This
module is part of the compiled build (compiled.py); the FastAPI wiring is not (FastAPI reads its endpoints'
signatures).
"""
from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Final

import orjson
from starlette.concurrency import run_in_threadpool

from instancetype_webhook.admission import envelope as rv
from instancetype_webhook.admission.context import ReviewContext, ReviewReply
from instancetype_webhook.admission.mutate import mutate
from instancetype_webhook.admission.validate import validate
from instancetype_webhook.httpbody import BodyTooLarge, ClientGone, read_body
from instancetype_webhook.kubevirt.causes import Verdict
from instancetype_webhook.kubevirt.source import CacheMiss, SourceUnavailable
from instancetype_webhook.server.metrics import Metrics
from instancetype_webhook.server.reviewlog import line_weight, log_review, review_line
from instancetype_webhook.settings import START_GRACE

log = logging.getLogger("instancetype_webhook.server")
Handler = Callable[[rv.Review, ReviewContext], ReviewReply]
# The reviews this door answers: path -> (endpoint name for metrics and logs, the admission layer's decision)
REVIEWS: Final[dict[str, tuple[str, Handler]]] = {"/mutate": ("mutate", mutate), "/validate": ("validate", validate)}


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
    ready: Callable[[], bool] = lambda: True  # the reference source's first sync (consulted until it is done)
    draining: bool = False
    configuration_status: Callable[[], str] = lambda: "KubeVirt's defaults"  # which cluster configuration is in use
    cache_status: Callable[[], dict[str, Any]] | None = None  # per resource: in sync, or since when and why not
    reference_source: str = ""  # for /readyz: "cluster", "catalog DIR" or the bundled catalogue's bundle
    start_grace: float = START_GRACE  # seconds after which it is ready without its first sync (--start-grace)
    started: float = field(default_factory=time.monotonic)
    started_serving: bool = False  # latched: the first sync was done, or the start grace passed

    def is_ready(self) -> bool:
        """Whether THIS replica can serve: not draining, and its reference source synced once (or the start
        grace passed). A source that falls out of sync later does not make it unready: the cause (the API
        server) is shared by every replica, so failing readiness would take them all out of the Service at
        once, including for the reviews that need no lookup; the reviews that need one get a retryable
        refusal instead (SourceUnavailable)."""
        if self.draining:
            return False
        if not self.started_serving and (time.monotonic() - self.started >= self.start_grace or self.ready()):
            self.started_serving = True
        return self.started_serving

    def not_ready_reason(self) -> str:
        if self.draining:
            return "draining"
        return f"reference source not synced yet (ready without it {self.start_grace:g}s after the start)"


def _late(review: rv.Review, hook: Webhook, kind: str) -> ReviewReply:
    message = f"review not answered within the {hook.deadline:g}s deadline (a reference lookup is slow)"
    return _unanswered(review, hook, kind, message)


def _unanswered(review: rv.Review, hook: Webhook, kind: str, message: str) -> ReviewReply:
    """A live lookup hung or failed: --deadline-action decides (deny with the reason, or allow with it
    as a warning)."""
    if hook.deadline_action == "allow":
        return ReviewReply(True, rv.response(review, Verdict.allow([message])), kind, "deadline")
    return ReviewReply(False, rv.response(review, rv.deny(message, 504)), kind, "deadline")


def _crashed(review: rv.Review, kind: str, exc: BaseException) -> ReviewReply:
    message = f"internal error while reviewing: {type(exc).__name__}"
    return ReviewReply(False, rv.response(review, rv.deny(message, 500)), kind, "error")


async def review_answer(read: Callable[[], Awaitable[bytes]], hook: Webhook, endpoint: str,
                        handler: Handler) -> tuple[int, bytes]:
    """(HTTP status, JSON bytes) for one review; `read()` reads the request body (BodyTooLarge past the cap).

    The handler runs inline when the source's caches answer everything it looks up (the common case), else
    in a worker thread under the review deadline."""
    start = time.perf_counter()
    metrics = hook.metrics
    metrics.in_flight += 1
    try:
        try:
            body = await read()
        except BodyTooLarge:
            return _reject(hook, endpoint, start, 413, f"request body larger than {hook.max_body_bytes} bytes")
        try:
            review = rv.parse_review(body, hook.max_json_depth)
        except rv.ReviewError as exc:
            return _reject(hook, endpoint, start, 400, str(exc), exc.field)
        try:
            outcome = await offloaded(handler, review, hook) if hook.offload else handler(review, hook.ctx)
        except Exception as failure:  # the deadline (TimeoutError), an unavailable API server, or a bug
            outcome = _failed(review, hook, endpoint, failure)
        return _answered(review, hook, endpoint, outcome, start)
    finally:
        metrics.in_flight -= 1


def _failed(review: rv.Review, hook: Webhook, endpoint: str, failure: Exception) -> ReviewReply:
    """The answer when the handler raised: past the deadline, the live source unavailable, or a bug."""
    kind = review["request"]["kind"].get("kind", "")
    if isinstance(failure, TimeoutError):
        hook.metrics.error(endpoint, "deadline")
        return _late(review, hook, kind)
    if isinstance(failure, SourceUnavailable):  # the live source could not answer: retryable
        log.warning("review %s: %s", review["request"]["uid"], failure.reason)
        hook.metrics.error(endpoint, "unavailable")
        return _unanswered(review, hook, kind, failure.reason)
    log.error("review %s failed", review["request"]["uid"], exc_info=failure)
    hook.metrics.error(endpoint, "exception")
    return _crashed(review, kind, failure)


def _answered(review: rv.Review, hook: Webhook, endpoint: str, outcome: ReviewReply, start: float) -> tuple[int, bytes]:
    """Count and log a handled review; its HTTP answer."""
    seconds = time.perf_counter() - start
    request = review["request"]
    metrics = hook.metrics
    metrics.observe(endpoint, request["operation"], request["kind"].get("kind", ""), outcome.outcome, seconds)
    if not outcome.allowed:
        metrics.denied(endpoint, outcome.body)
    weight = line_weight(outcome.outcome)
    if weight:
        line = review_line(endpoint, request, outcome.allowed, outcome.patch_ops, seconds, outcome.outcome,
                           outcome.policy)
        if weight > 1:
            line["sampled"] = weight
        log_review(line)
    return 200, outcome.body


def _from_caches(handler: Handler, review: rv.Review, hook: Webhook) -> ReviewReply | None:
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


async def _in_thread(handler: Handler, review: rv.Review, hook: Webhook) -> ReviewReply:
    return await asyncio.wait_for(run_in_threadpool(handler, review, hook.ctx), hook.deadline)


async def offloaded(handler: Handler, review: rv.Review, hook: Webhook) -> ReviewReply:
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


class AdmissionApp:
    """The ASGI app uvicorn runs: POST /mutate and /validate are answered here directly, with no
    routing, Request object or dependency machinery (the framework costs about twice our own work per
    review); everything else goes to the FastAPI app, whose OpenAPI document also describes /mutate and
    /validate. Attribute access (state, openapi(), routes) is forwarded to the FastAPI app."""

    def __init__(self, api: Any, hook: Webhook):  # api: the FastAPI app (instancetype_webhook.server.app.create_api)
        self.api, self.hook = api, hook
        self.reviews: dict[str, tuple[str, Handler]] = REVIEWS

    def __getattr__(self, name: str) -> Any:
        return getattr(self.api, name)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        post = scope["type"] == "http" and scope["method"] == "POST"
        route = self.reviews.get(scope.get("path", "")) if post else None
        if route is None:
            return await self.api(scope, receive, send)
        try:
            status, body = await review_answer(lambda: read_body(scope, receive, self.hook.max_body_bytes),
                                               self.hook, *route)
        except ClientGone:
            return
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]})
        await send({"type": "http.response.body", "body": body})
