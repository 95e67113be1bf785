"""FastAPI wiring: the admission endpoints, preview, health. The work happens in mutate/validate.

Hot path: the body is read as bytes (capped), decoded once with orjson, answered with a Response
built from bytes. When the reference source may call a remote API (the live cluster on a cache
miss), the handler runs in a worker thread under the review deadline; otherwise it runs inline.
"""
from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import orjson
from fastapi import FastAPI, Query, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from app.kubevirt.causes import ExpandError, Verdict
from app.kubevirt.source import CacheMiss
from app.server import review as rv
from app.server.context import Outcome, ReviewContext, namespace_of, with_namespace
from app.server.logs import log_review, review_line
from app.server.metrics import Metrics
from app.server.mutate import flatten, mutate
from app.server.validate import validate

log = logging.getLogger("instancetype_webhook.server")
JSON = "application/json"
Handler = Callable[[rv.Review, ReviewContext], Outcome]

REVIEW_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["apiVersion", "kind", "request"],
    "properties": {
        "apiVersion": {"type": "string", "enum": list(rv.API_VERSIONS)},
        "kind": {"type": "string", "enum": ["AdmissionReview"]},
        "request": {
            "type": "object",
            "required": ["uid", "kind", "operation"],
            "properties": {
                "uid": {"type": "string"},
                "kind": {"type": "object", "properties": {
                    "group": {"type": "string"}, "version": {"type": "string"}, "kind": {"type": "string"}}},
                "operation": {"type": "string", "enum": list(rv.OPERATIONS)},
                "namespace": {"type": "string"},
                "name": {"type": "string"},
                "object": {"type": ["object", "null"]},  # null on DELETE, as the API server sends it
                "oldObject": {"type": ["object", "null"]},
                "dryRun": {"type": "boolean"},
            },
            # CREATE and UPDATE carry the object (a 400 names it otherwise)
            "if": {"properties": {"operation": {"enum": ["CREATE", "UPDATE"]}}},
            "then": {"required": ["object"], "properties": {"object": {"type": "object"}}},
        },
    },
}
REVIEW_DOC = {
    "requestBody": {"required": True, "content": {JSON: {"schema": REVIEW_SCHEMA}}},
    "responses": {"200": {"description": "AdmissionReview with response"},
                  "400": {"description": "not an AdmissionReview"}, "413": {"description": "body too large"}},
}


SIZE_NAME = r"^(?:[^/]*/)?[^/]+$"  # /preview?instancetype=, ?preference=: NAME or KIND/NAME


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


async def read_body(request: Request, cap: int) -> bytes:
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > cap:
        raise BodyTooLarge
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > cap:
            raise BodyTooLarge
        chunks.append(chunk)
    return b"".join(chunks)


def _error(status: int, message: str, field: str = "") -> Response:
    return Response(orjson.dumps({"error": message, "field": field}), status_code=status, media_type=JSON)


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


async def answer(request: Request, hook: Webhook, endpoint: str, handler: Handler) -> Response:
    status, body = await review_answer(lambda: read_body(request, hook.max_body_bytes), hook, endpoint, handler)
    return Response(body, status_code=status, media_type=JSON)


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
        except Exception as exc:  # a bug must still answer the API server, with a reason
            unavailable = getattr(exc, "admission_message", None)  # the live source could not answer
            if unavailable:
                log.warning("review %s: %s", review["request"]["uid"], unavailable)
                metrics.error(endpoint, "unavailable")
                outcome = _unanswered(review, hook, kind, unavailable)
            else:
                log.exception("review %s failed", review["request"]["uid"])
                metrics.error(endpoint, "exception")
                outcome = _crashed(review, kind, exc)
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


def preview(vm: Any, ctx: ReviewContext, namespace: str | None, instancetype: str | None = None,
            preference: str | None = None) -> dict[str, Any]:
    """VM in -> flat VM, JSONPatch, validation causes and (when it can be made) the domain XML.
    With `instancetype` and/or `preference` ([KIND/]NAME): the flat VM given a new size (preview_resize)."""
    from app.kubevirt.admission import validate_vm
    from app.kubevirt.mutator import mutate_vm

    if type(vm) is not dict or type(vm.get("spec")) is not dict:
        raise rv.ReviewError("", "body must be a VirtualMachine object with a spec")
    ns = namespace or namespace_of({}, vm)
    if instancetype is not None or preference is not None:
        return preview_resize(vm, ctx, ns, instancetype, preference)
    stage = mutate_vm(vm, None, ctx.source, ctx.cluster, namespace=ns)  # inferFromVolume etc., as /mutate
    if stage.vm is None:
        return {"allowed": False, "message": stage.verdict.message,
                "conflicts": [c.to_dict() for c in stage.verdict.causes], "warnings": []}
    verdict = validate_vm(with_namespace(stage.vm, ns), ctx.source, ctx.cluster)
    out: dict[str, Any] = {
        "allowed": verdict.allowed, "message": verdict.message,
        "conflicts": [c.to_dict() for c in verdict.causes], "warnings": [*stage.verdict.warnings, *verdict.warnings],
    }
    try:
        flat = flatten(stage.vm, ns, ctx, {i.matcher: i.to_dict() for i in stage.inferred})
    except ExpandError as exc:
        out["error"] = {"kind": exc.kind, "message": exc.message, "causes": [c.to_dict() for c in exc.causes]}
        return out
    from app.kubevirt.guest import review_guest
    from app.patch import make_patch

    # what flattening changes in the guest, as /mutate reports it (or keeps it, under --preserve-guest)
    flat, guest = review_guest(with_namespace(stage.vm, ns), flat, ctx.source, ctx.cluster, ctx.preserve_guest)
    out["warnings"] = [*out["warnings"], *guest]
    out["vm"] = flat
    out["patch"] = make_patch(vm, flat)
    out.update(domain_xml(with_namespace(vm, ns), ns, ctx))
    return out


def preview_resize(vm: dict[str, Any], ctx: ReviewContext, ns: str, instancetype: str | None,
                   preference: str | None) -> dict[str, Any]:
    """What `instancetype-webhook resize` answers, as JSON: the VM as an UPDATE naming the size would store it."""
    from app.patch import make_patch
    from app.server.resize import resize_named

    result, denied, stored, warnings = resize_named(vm, instancetype, preference, ns, ctx)
    verdict = denied or (result.checked.verdict if result else Verdict.allow())
    out: dict[str, Any] = {
        "allowed": stored is not None, "message": verdict.message,
        "conflicts": [c.to_dict() for c in verdict.causes],
        "warnings": [*warnings, *(result.warnings if result else []), *verdict.warnings],
        "replaced": [{"field": r.field, "old": r.old} for r in (result.replaced if result else [])],
    }
    exc = result.checked.error if result else None
    if stored is None:
        if exc is not None:
            out["error"] = {"kind": exc.kind, "message": exc.message, "causes": [c.to_dict() for c in exc.causes]}
        return out
    out["vm"] = stored
    out["patch"] = make_patch(vm, stored)
    out.update(domain_xml(with_namespace(stored, ns), ns, ctx))
    return out


def domain_xml(vm: dict[str, Any], namespace: str, ctx: ReviewContext) -> dict[str, Any]:
    """The domain of the VM as it will be stored under its effective policy (reference: it keeps its
    references and virt-controller applies them at start; expand/expandAll: the flat VM, as --preserve-guest
    stores it when that is on), then started."""
    from app.domxml.cluster import domain_config_from_settings
    from app.domxml.stored import render_stored_vm
    from app.server.policy import effective_policy

    policy, _, _ = effective_policy(ctx.policy, vm, namespace, ctx.namespace_labels, ctx.vm_policy_overrides)
    try:
        xml = render_stored_vm(vm, ctx.source, policy, domain_config_from_settings(ctx.cluster),
                               preserve_guest=ctx.preserve_guest)
        return {"domainXML": xml, "domainXMLPolicy": policy}
    except Exception as exc:  # the preview still shows the flat VM
        return {"domainXML": None, "domainXMLPolicy": policy, "domainXMLError": str(exc) or type(exc).__name__}


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

    def __init__(self, api: FastAPI, hook: Webhook):
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


def create_app(hook: Webhook, playground: Any = None, where: str = "") -> AdmissionApp:
    """The server's app; with `playground` (an app.playground.routes.Playground) the page at /playground."""
    return AdmissionApp(create_api(hook, playground, where), hook)


def create_api(hook: Webhook, playground: Any = None, where: str = "") -> FastAPI:
    app = FastAPI(title="instancetype-webhook", version="0.1.0",
                  description="KubeVirt instance type and preference admission webhook")
    app.state.hook = hook
    if playground is not None:
        from app.playground.routes import add_playground

        add_playground(app, hook, playground.samples, where)

    @app.post("/mutate", openapi_extra=REVIEW_DOC, response_class=Response)
    async def mutate_endpoint(request: Request) -> Response:
        return await answer(request, hook, "mutate", mutate)

    @app.post("/validate", openapi_extra=REVIEW_DOC, response_class=Response)
    async def validate_endpoint(request: Request) -> Response:
        return await answer(request, hook, "validate", validate)

    @app.post("/preview", response_class=Response, openapi_extra={
        "requestBody": {"required": True, "content": {JSON: {"schema": {
            "type": "object", "required": ["spec"], "properties": {"spec": {"type": "object"}}}}}},
        "responses": {"400": {"description": "not a VirtualMachine"}, "413": {"description": "body too large"}}})
    async def preview_endpoint(
            request: Request, namespace: str | None = None,
            instancetype: str | None = Query(None, pattern=SIZE_NAME,
                                             description="resize: the new instance type, NAME or KIND/NAME"),
            preference: str | None = Query(None, pattern=SIZE_NAME,
                                           description="resize: the new preference, NAME or KIND/NAME"),
    ) -> Response:
        try:
            body = await read_body(request, hook.max_body_bytes)
        except BodyTooLarge:
            return _error(413, f"request body larger than {hook.max_body_bytes} bytes")
        try:
            vm = orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            return _error(400, f"body is not valid JSON: {exc}")
        try:
            result = await run_in_threadpool(preview, vm, hook.ctx, namespace, instancetype, preference)
        except rv.ReviewError as exc:
            return _error(400, str(exc), exc.field)
        return Response(orjson.dumps(result), media_type=JSON)

    @app.get("/healthz", response_class=Response)
    async def healthz() -> Response:
        return Response(b'{"status":"ok"}', media_type=JSON)

    @app.get("/readyz", response_class=Response, responses={503: {"description": "not ready, or draining"}})
    async def readyz() -> Response:
        if hook.is_ready():
            return Response(orjson.dumps({"status": "ready", "clusterConfiguration": hook.configuration_status()}),
                            media_type=JSON)
        why = "draining" if hook.draining else "reference source not synced"
        return Response(orjson.dumps({"status": "not ready", "reason": why}), status_code=503, media_type=JSON)

    return app
