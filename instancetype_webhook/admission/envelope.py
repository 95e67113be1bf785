"""admission.k8s.io/v1 AdmissionReview in and out, as plain dicts decoded with orjson.

`parse_review` checks only what the webhook relies on and raises `ReviewError` naming the first
thing that is wrong (the HTTP layer turns it into a 400 JSON error). The object itself stays plain
JSON data: it is never validated as a whole here, never copied.
"""
from __future__ import annotations

from typing import Any, Final, NotRequired, TypedDict

import orjson
import pybase64

from instancetype_webhook.kubevirt.causes import Cause, Verdict
from instancetype_webhook.kubevirt.jsondata import COMPILED

API_VERSIONS: Final[tuple[str, ...]] = ("admission.k8s.io/v1", "admission.k8s.io/v1beta1")
OPERATIONS: Final[tuple[str, ...]] = ("CREATE", "UPDATE", "DELETE", "CONNECT")
MAX_WARNING: Final = 120


class GroupVersionKind(TypedDict):
    group: str
    version: str
    kind: str


class AdmissionRequest(TypedDict):
    uid: str
    kind: GroupVersionKind
    operation: str
    namespace: NotRequired[str]
    name: NotRequired[str]
    object: NotRequired[dict[str, Any] | None]
    oldObject: NotRequired[dict[str, Any] | None]
    dryRun: NotRequired[bool]


class Review(TypedDict):
    apiVersion: str
    kind: str
    request: AdmissionRequest


class ReviewError(ValueError):
    """The body is not an AdmissionReview the webhook can answer; `field` says where."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.message = message

    def body(self) -> bytes:
        return orjson.dumps({"error": str(self), "field": self.field})


def _nests_within(node: dict[str, Any] | list[Any], levels: int) -> bool:
    """Whether the objects and arrays of `node` (itself one) nest at most `levels` deep; recurses at most that."""
    if levels <= 0:
        return False
    for value in node.values() if type(node) is dict else node:
        if (type(value) is dict or type(value) is list) and not _nests_within(value, levels - 1):
            return False
    return True


def _too_deep(body: bytes, doc: dict[str, Any], limit: int) -> bool:
    if COMPILED:  # the walk costs half of counting the brackets in the bytes
        return not _nests_within(doc, limit)
    # In pure Python the count (in C, without a copy) is the cheap bound: fewer brackets cannot nest deeper.
    return body.count(b"{") + body.count(b"[") > limit and not _nests_within(doc, limit)


def _need(obj: dict[str, Any], key: str, kind: type, where: str) -> Any:
    field = f"{where}.{key}" if where else key
    value = obj.get(key)
    if value is None:
        raise ReviewError(field, "required")
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ReviewError(field, f"must be {_type_name(kind)}, got {_json_type(value)}")
    return value


def _type_name(kind: type) -> str:
    return {dict: "an object", str: "a string", list: "an array", bool: "a boolean"}.get(kind, kind.__name__)


def _json_type(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", int: "number", float: "number"}.get(
        type(value), "null")


def parse_review(body: bytes, max_depth: int = 200) -> Review:
    """The decoded review, or ReviewError naming what is wrong."""
    if not body:
        raise ReviewError("", "empty request body; expected an admission.k8s.io/v1 AdmissionReview")
    try:
        doc = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise ReviewError("", f"body is not valid JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise ReviewError("", f"body must be a JSON object (an AdmissionReview), got {_json_type(doc)}")
    if _too_deep(body, doc, max_depth):
        raise ReviewError("", f"JSON nesting deeper than {max_depth} levels")
    kind = doc.get("kind")
    if kind != "AdmissionReview":
        raise ReviewError("kind", f"must be AdmissionReview, got {kind!r}")
    api_version = doc.get("apiVersion")
    if api_version not in API_VERSIONS:
        raise ReviewError("apiVersion", f"must be one of {', '.join(API_VERSIONS)}, got {api_version!r}")
    request = _need(doc, "request", dict, "")
    _need(request, "uid", str, "request")
    gvk = _need(request, "kind", dict, "request")
    for key in ("group", "version", "kind"):
        if not isinstance(gvk.get(key, ""), str):
            raise ReviewError(f"request.kind.{key}", "must be a string")
    operation = _need(request, "operation", str, "request")
    if operation not in OPERATIONS:
        raise ReviewError("request.operation", f"must be one of {', '.join(OPERATIONS)}, got {operation!r}")
    for key in ("object", "oldObject"):
        value = request.get(key)
        if value is not None and not isinstance(value, dict):
            raise ReviewError(f"request.{key}", f"must be an object, got {_json_type(value)}")
    if operation in ("CREATE", "UPDATE") and request.get("object") is None:
        raise ReviewError("request.object", f"required for {operation}")
    for key in ("namespace", "name"):
        if not isinstance(request.get(key, ""), str):
            raise ReviewError(f"request.{key}", "must be a string")
    if not isinstance(request.get("dryRun", False), bool):
        raise ReviewError("request.dryRun", "must be a boolean")
    return doc  # type: ignore[return-value]  # a dict that the checks above proved to be a Review


def subject(request: AdmissionRequest) -> dict[str, Any]:
    """request.object of a CREATE or UPDATE (parse_review refuses a review of either without one)."""
    obj = request.get("object")
    if obj is None:
        raise ReviewError("request.object", f"required for {request['operation']}")
    return obj


def status_for(verdict: Verdict) -> dict[str, Any]:
    """metav1.Status of a denial in upstream's format (ToAdmissionResponse / ToAdmissionResponseError)."""
    status: dict[str, Any] = {"code": verdict.code or 400, "message": verdict.message or ""}
    if verdict.causes:
        status["reason"] = "Invalid"
        status["details"] = {"causes": [c.to_dict() for c in verdict.causes]}
    return status


def short_warnings(warnings: list[str]) -> list[str]:
    """Warnings cut to at most 120 characters each (the API server truncates longer ones)."""
    return [w if len(w) <= MAX_WARNING else w[: MAX_WARNING - 3] + "..." for w in warnings]


def response(review: Review, verdict: Verdict, patch: list[dict[str, Any]] | None = None) -> bytes:
    """The AdmissionReview answer as JSON bytes; `response.uid` is `request.uid`."""
    out: dict[str, Any] = {"uid": review["request"]["uid"], "allowed": verdict.allowed}
    if not verdict.allowed:
        out["status"] = status_for(verdict)
    if patch:
        out["patchType"] = "JSONPatch"
        out["patch"] = pybase64.b64encode_as_string(orjson.dumps(patch))  # SIMD: a tenth of binascii's time
    if verdict.warnings:
        out["warnings"] = short_warnings(verdict.warnings)
    return orjson.dumps({"apiVersion": review["apiVersion"], "kind": "AdmissionReview", "response": out})


def deny(message: str, code: int = 400, causes: list[Cause] | None = None) -> Verdict:
    return Verdict(allowed=False, message=message, code=code, causes=list(causes or []))
