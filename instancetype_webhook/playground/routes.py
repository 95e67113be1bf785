"""The playground's HTTP side: the page, its assets, its samples and its JSON API, on the webhook's app.

GET /playground (the page), /playground/static/NAME (script, style), GET /playground/api/samples,
GET /playground/api/catalog (the instance type and preference names the source holds), POST
/playground/api/run (`instancetype_webhook.playground.engine.run`; the body capped like /preview's). Every answer
carries a strict Content-Security-Policy: the page loads nothing but its own two files and talks to
nothing but its own API.
"""
from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Protocol

import orjson
from fastapi import FastAPI, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from instancetype_webhook.admission.context import ReviewContext
from instancetype_webhook.httpbody import BodyTooLarge, ClientGone, read_body
from instancetype_webhook.kubevirt.source import (
    CLUSTER_INSTANCETYPE,
    CLUSTER_PREFERENCE,
    INSTANCETYPE,
    PREFERENCE,
    SourceUnavailable,
)
from instancetype_webhook.playground.engine import Choices, PlaygroundError, run


class Host(Protocol):
    """What the playground needs of the server it is mounted on (server.asgi.Webhook)."""

    ctx: ReviewContext
    max_body_bytes: int
    max_json_depth: int
    deadline: float

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
HEADERS = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
           "Cache-Control": "no-store", "X-Frame-Options": "DENY"}
STATIC = {"playground.js": "text/javascript; charset=utf-8", "playground.css": "text/css; charset=utf-8",
          "favicon.svg": "image/svg+xml"}
JSON = "application/json"


@dataclass(frozen=True)
class Sample:
    name: str
    title: str
    text: str


@dataclass(frozen=True)
class Playground:
    """What a server mounts the playground with: its samples, and reference objects to add offline (-f)."""

    samples: list[Sample]
    objects: list[dict[str, Any]] = field(default_factory=list)


def bundled_samples() -> list[Sample]:
    """The samples shipped with the package (playground/samples/, made from examples/), in page order."""
    from_package = resources.files("instancetype_webhook.playground") / "samples"
    order = ("expand.yaml", "reference.yaml", "conflict.yaml", "missing-reference.yaml", "preview.yaml")
    out = []
    for name in order:
        text = (from_package / name).read_text(encoding="utf-8")
        title = text.splitlines()[0].removeprefix("# ").split(" (examples/")[0]
        out.append(Sample(name.removesuffix(".yaml"), title, text))
    return out


def catalogue_names(source: Any) -> dict[str, list[str]]:
    """The instance types and preferences a source holds, as the matchers name them (cluster kinds by
    NAME, namespaced ones as KIND/NAME with their namespace). Reads the offline source's objects, or a
    live source's watch caches (never a request to the API server)."""
    if hasattr(source, "objects"):
        objects = list(source.objects())
    else:
        informers = getattr(source, "informers", {})
        objects = [obj for kind in (INSTANCETYPE, CLUSTER_INSTANCETYPE, PREFERENCE, CLUSTER_PREFERENCE)
                   for obj in list(getattr(informers.get(kind), "store", {}).values())]
    names: dict[str, set[str]] = {"instancetypes": set(), "preferences": set()}
    for obj in objects:
        kind = obj.get("kind")
        meta = obj.get("metadata") or {}
        name = meta.get("name")
        if not isinstance(name, str):
            continue
        group = "instancetypes" if kind in (INSTANCETYPE, CLUSTER_INSTANCETYPE) else "preferences"
        if kind in (CLUSTER_INSTANCETYPE, CLUSTER_PREFERENCE):
            names[group].add(name)
        elif kind in (INSTANCETYPE, PREFERENCE):
            names[group].add(f"{kind}/{name}")
    return {group: sorted(values) for group, values in names.items()}


def page(status: int, body: bytes, media_type: str) -> Response:
    return Response(body, status_code=status, media_type=media_type, headers=HEADERS)


def _json(status: int, value: Any) -> Response:
    return page(status, orjson.dumps(value), JSON)


def add_playground(app: FastAPI, hook: Host, samples: list[Sample], where: str) -> None:
    """Mount the playground on `app`: `samples` one click away, `where` names the reference source."""
    folder = resources.files("instancetype_webhook.playground") / "static"
    assets = {name: (folder / name).read_bytes() for name in STATIC}
    index = (folder / "index.html").read_bytes()
    sample_list = [{"name": s.name, "title": s.title, "text": s.text} for s in samples]

    @app.get("/playground", response_class=Response, include_in_schema=False)
    async def playground_page() -> Response:
        return page(200, index, "text/html; charset=utf-8")

    @app.get("/playground/static/{name}", response_class=Response, include_in_schema=False)
    async def playground_asset(name: str) -> Response:
        if name not in assets:
            return _json(404, {"error": f"no asset {name}"})
        return page(200, assets[name], STATIC[name])

    @app.get("/playground/api/samples", response_class=Response, include_in_schema=False)
    async def playground_samples() -> Response:
        return _json(200, sample_list)

    @app.get("/playground/api/catalog", response_class=Response, include_in_schema=False)
    async def playground_catalog() -> Response:
        return _json(200, {**catalogue_names(hook.ctx.source), "source": where, "policy": hook.ctx.policy,
                           "vmPolicyOverrides": hook.ctx.vm_policy_overrides})

    @app.post("/playground/api/run", response_class=Response, include_in_schema=False)
    async def playground_run(request: Request) -> Response:
        try:
            body = await read_body(request.scope, request.receive, hook.max_body_bytes)
        except BodyTooLarge:
            return _json(413, {"ok": False, "error": f"request body larger than {hook.max_body_bytes} bytes"})
        except ClientGone:
            return _json(400, {"ok": False, "error": "the client left before sending the whole body"})
        try:
            doc = orjson.loads(body)
            if not isinstance(doc, dict) or not isinstance(doc.get("text"), str):
                raise PlaygroundError("body must be a JSON object with the editor's text in `text`")
            choices = Choices.from_json(doc)
        except orjson.JSONDecodeError as exc:
            return _json(400, {"ok": False, "error": f"body is not valid JSON: {exc}"})
        except PlaygroundError as exc:
            return _json(400, {"ok": False, "error": str(exc)})
        try:
            result = await asyncio.wait_for(
                run_in_threadpool(run, doc["text"], choices, hook.ctx, hook.max_json_depth), hook.deadline)
        except TimeoutError:
            return _json(504, {"ok": False, "error": f"not answered within {hook.deadline:g}s (a lookup is slow)"})
        except SourceUnavailable as exc:  # the live source cannot answer: retry later
            return _json(503, {"ok": False, "error": exc.reason, "retryable": True})
        except Exception as exc:  # a bug: still a reason on the page
            return _json(500, {"ok": False, "error": f"internal error: {type(exc).__name__}"})
        return _json(200, result)
