"""FastAPI wiring: /preview, the probes, the playground, and the OpenAPI document (which also describes the
review endpoints that server.asgi answers before the framework)."""
from __future__ import annotations

from typing import Any

import orjson
from fastapi import FastAPI, Query, Request
from fastapi.openapi.utils import get_openapi
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from instancetype_webhook._version import __version__
from instancetype_webhook.admission import envelope as rv
from instancetype_webhook.admission.preview import preview
from instancetype_webhook.httpbody import BodyTooLarge, ClientGone, read_body
from instancetype_webhook.kubevirt.releases import ReleaseProfile
from instancetype_webhook.server.asgi import REVIEWS, AdmissionApp, Webhook

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


def _error(status: int, message: str, field: str = "") -> Response:
    return Response(orjson.dumps({"error": message, "field": field}), status_code=status, media_type=JSON)


TITLE = "instancetype-webhook"
DESCRIPTION = "KubeVirt instance type and preference admission webhook"


def openapi(app: FastAPI) -> dict[str, Any]:
    """The app's OpenAPI document plus the review endpoints (POST /mutate and /validate), which server.asgi
    answers before the framework routes anything."""
    if app.openapi_schema is None:
        document = get_openapi(title=TITLE, version=__version__, description=DESCRIPTION, routes=app.routes)
        for path, (endpoint, _) in REVIEWS.items():
            document["paths"][path] = {"post": {"summary": f"{endpoint.capitalize()} a VirtualMachine review",
                                                "operationId": f"{endpoint}_review", **REVIEW_DOC}}
        app.openapi_schema = document
    return app.openapi_schema


def release_status(release: ReleaseProfile) -> dict[str, str]:
    """The KubeVirt release answered as, for /readyz: release, profile, where it came from, what was assumed."""
    status = {"release": release.name, "profile": release.line, "source": release.source or "default"}
    if release.assumed:
        status["note"] = release.assumed
    return status


def create_app(hook: Webhook, playground: Any = None, where: str = "") -> AdmissionApp:
    """The server's app; with `playground` (an instancetype_webhook.playground.routes.Playground) the page at
    /playground."""
    return AdmissionApp(create_api(hook, playground, where), hook)


def create_api(hook: Webhook, playground: Any = None, where: str = "") -> FastAPI:
    app = FastAPI(title=TITLE, version=__version__, description=DESCRIPTION)
    app.state.hook = hook
    app.openapi = lambda: openapi(app)  # type: ignore[method-assign]  # FastAPI's documented way to extend it
    if playground is not None:
        from instancetype_webhook.playground.routes import add_playground

        add_playground(app, hook, playground.samples, where)

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
            body = await read_body(request.scope, request.receive, hook.max_body_bytes)
        except BodyTooLarge:
            return _error(413, f"request body larger than {hook.max_body_bytes} bytes")
        except ClientGone:
            return _error(400, "the client left before sending the whole body")
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
        cache = hook.cache_status() if hook.cache_status is not None else None
        detail = {"referenceCache": cache} if cache is not None else {}
        if hook.is_ready():
            source = {"referenceSource": hook.reference_source} if hook.reference_source else {}
            return Response(orjson.dumps({"status": "ready", "clusterConfiguration": hook.configuration_status(),
                                          "kubevirt": release_status(hook.ctx.cluster.release), **source,
                                          **detail}),
                            media_type=JSON)
        return Response(orjson.dumps({"status": "not ready", "reason": hook.not_ready_reason(), **detail}),
                        status_code=503,
                        media_type=JSON)

    return app
