"""FastAPI wiring: the admission endpoints (as the OpenAPI document describes them), preview, health.

The server's reviews do not come through here: server.asgi answers POST /mutate and /validate before
the framework (body as bytes, decoded once with orjson, the handler inline or in a worker thread under
the review deadline). The FastAPI endpoints for them serve the same answers through `answer`.
"""
from __future__ import annotations

from typing import Any

import orjson
from fastapi import FastAPI, Query, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from instancetype_webhook.kubevirt.causes import ExpandError, Verdict
from instancetype_webhook.server import review as rv
from instancetype_webhook.server.asgi import (  # noqa: F401  (Webhook, offloaded, review_answer: imported from here too)
    AdmissionApp,
    BodyTooLarge,
    Handler,
    Webhook,
    offloaded,
    review_answer,
)
from instancetype_webhook.server.context import ReviewContext, namespace_of, with_namespace
from instancetype_webhook.server.mutate import flatten, mutate
from instancetype_webhook.server.validate import validate

JSON = "application/json"

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


async def answer(request: Request, hook: Webhook, endpoint: str, handler: Handler) -> Response:
    status, body = await review_answer(lambda: read_body(request, hook.max_body_bytes), hook, endpoint, handler)
    return Response(body, status_code=status, media_type=JSON)


def preview(vm: Any, ctx: ReviewContext, namespace: str | None, instancetype: str | None = None,
            preference: str | None = None) -> dict[str, Any]:
    """VM in -> flat VM, JSONPatch, validation causes and (when it can be made) the domain XML.
    With `instancetype` and/or `preference` ([KIND/]NAME): the flat VM given a new size (preview_resize)."""
    from instancetype_webhook.kubevirt.admission import validate_vm
    from instancetype_webhook.kubevirt.mutator import mutate_vm

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
    from instancetype_webhook.kubevirt.guest import review_guest
    from instancetype_webhook.patch import make_patch

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
    from instancetype_webhook.patch import make_patch
    from instancetype_webhook.server.resize import resize_named

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
    from instancetype_webhook.domxml.cluster import domain_config_from_settings
    from instancetype_webhook.domxml.stored import render_stored_vm
    from instancetype_webhook.server.policy import effective_policy

    policy, _, _ = effective_policy(ctx.policy, vm, namespace, ctx.namespace_labels, ctx.vm_policy_overrides)
    try:
        xml = render_stored_vm(vm, ctx.source, policy, domain_config_from_settings(ctx.cluster),
                               preserve_guest=ctx.preserve_guest)
        return {"domainXML": xml, "domainXMLPolicy": policy}
    except Exception as exc:  # the preview still shows the flat VM
        return {"domainXML": None, "domainXMLPolicy": policy, "domainXMLError": str(exc) or type(exc).__name__}


def create_app(hook: Webhook, playground: Any = None, where: str = "") -> AdmissionApp:
    """The server's app; with `playground` (an instancetype_webhook.playground.routes.Playground) the page at
    /playground."""
    return AdmissionApp(create_api(hook, playground, where), hook)


def create_api(hook: Webhook, playground: Any = None, where: str = "") -> FastAPI:
    app = FastAPI(title="instancetype-webhook", version="0.1.0",
                  description="KubeVirt instance type and preference admission webhook")
    app.state.hook = hook
    if playground is not None:
        from instancetype_webhook.playground.routes import add_playground

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
