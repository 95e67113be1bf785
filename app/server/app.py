"""FastAPI wiring: the admission endpoints, preview, health. The work happens in mutate/validate.

Hot path: the body is read as bytes (capped), decoded once with orjson, answered with a Response
built from bytes. When the reference source may call a remote API (the live cluster on a cache
miss), the handler runs in a worker thread under the review deadline; otherwise it runs inline.
"""
from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import orjson
from fastapi import FastAPI, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from app.kubevirt.causes import ExpandError, Verdict
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
                "object": {"type": "object"},
                "oldObject": {"type": "object"},
                "dryRun": {"type": "boolean"},
            },
            # CREATE and UPDATE carry the object (a 400 names it otherwise)
            "if": {"properties": {"operation": {"enum": ["CREATE", "UPDATE"]}}},
            "then": {"required": ["object"]},
        },
    },
}
REVIEW_DOC = {
    "requestBody": {"required": True, "content": {JSON: {"schema": REVIEW_SCHEMA}}},
    "responses": {"200": {"description": "AdmissionReview with response"},
                  "400": {"description": "not an AdmissionReview"}, "413": {"description": "body too large"}},
}


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
    start = time.perf_counter()
    metrics = hook.metrics
    metrics.in_flight.inc()
    parsed: dict[str, Any] | None = None
    try:
        try:
            review = rv.parse_review(await read_body(request, hook.max_body_bytes), hook.max_json_depth)
        except BodyTooLarge:
            return _reject(hook, endpoint, start, 413, f"request body larger than {hook.max_body_bytes} bytes")
        except rv.ReviewError as exc:
            return _reject(hook, endpoint, start, 400, str(exc), exc.field)
        parsed = review["request"]
        kind = review["request"]["kind"].get("kind", "")
        try:
            if hook.offload:
                outcome = await asyncio.wait_for(run_in_threadpool(handler, review, hook.ctx), hook.deadline)
            else:
                outcome = handler(review, hook.ctx)
        except (asyncio.TimeoutError, TimeoutError):
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
        log_review(review_line(endpoint, parsed, outcome.allowed, outcome.patch_ops, seconds, outcome.outcome,
                               outcome.policy))
        return Response(outcome.body, media_type=JSON)
    finally:
        metrics.in_flight.dec()


def _reject(hook: Webhook, endpoint: str, start: float, status: int, message: str, field: str = "") -> Response:
    seconds = time.perf_counter() - start
    hook.metrics.error(endpoint, "too_large" if status == 413 else "bad_request")
    hook.metrics.observe(endpoint, "", "", "rejected", seconds)
    log_review(review_line(endpoint, None, None, 0, seconds, "rejected", status=status, error=message))
    return _error(status, message, field)


def preview(vm: Any, ctx: ReviewContext, namespace: str | None) -> dict[str, Any]:
    """VM in -> flat VM, JSONPatch, validation causes and (when it can be made) the domain XML."""
    from app.kubevirt.admission import validate_vm

    if type(vm) is not dict or type(vm.get("spec")) is not dict:
        raise rv.ReviewError("", "body must be a VirtualMachine object with a spec")
    ns = namespace or namespace_of({}, vm)
    verdict = validate_vm(with_namespace(vm, ns), ctx.source, ctx.cluster)
    out: dict[str, Any] = {
        "allowed": verdict.allowed, "message": verdict.message,
        "conflicts": [c.to_dict() for c in verdict.causes], "warnings": verdict.warnings,
    }
    try:
        flat = flatten(vm, ns, ctx)
    except ExpandError as exc:
        out["error"] = {"kind": exc.kind, "message": exc.message, "causes": [c.to_dict() for c in exc.causes]}
        return out
    from app.patch import make_patch

    out["vm"] = flat
    out["patch"] = make_patch(vm, flat)
    out.update(domain_xml(flat))
    return out


def domain_xml(flat: dict[str, Any]) -> dict[str, Any]:
    try:
        from app.domxml import render_domain, vmi_from_vm  # type: ignore[attr-defined]
    except ImportError:
        return {"domainXML": None, "domainXMLError": "domain XML generator not available"}
    try:
        return {"domainXML": render_domain(vmi_from_vm(flat))}
    except Exception as exc:  # the preview still shows the flat VM
        return {"domainXML": None, "domainXMLError": str(exc) or type(exc).__name__}


def create_app(hook: Webhook) -> FastAPI:
    app = FastAPI(title="instancetype-webhook", version="0.1.0",
                  description="KubeVirt instance type and preference admission webhook")
    app.state.hook = hook

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
    async def preview_endpoint(request: Request, namespace: str | None = None) -> Response:
        try:
            body = await read_body(request, hook.max_body_bytes)
        except BodyTooLarge:
            return _error(413, f"request body larger than {hook.max_body_bytes} bytes")
        try:
            vm = orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            return _error(400, f"body is not valid JSON: {exc}")
        try:
            result = await run_in_threadpool(preview, vm, hook.ctx, namespace)
        except rv.ReviewError as exc:
            return _error(400, str(exc), exc.field)
        return Response(orjson.dumps(result), media_type=JSON)

    @app.get("/healthz", response_class=Response)
    async def healthz() -> Response:
        return Response(b'{"status":"ok"}', media_type=JSON)

    @app.get("/readyz", response_class=Response, responses={503: {"description": "not ready, or draining"}})
    async def readyz() -> Response:
        if hook.is_ready():
            return Response(b'{"status":"ready"}', media_type=JSON)
        why = "draining" if hook.draining else "reference source not synced"
        return Response(orjson.dumps({"status": "not ready", "reason": why}), status_code=503, media_type=JSON)

    return app
