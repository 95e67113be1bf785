"""What the fake API server does with a CRD's structural schema, as kube-apiserver does on every write of
a custom resource: unknown fields are pruned (unless `x-kubernetes-preserve-unknown-fields`), then the
object is validated against the `openAPIV3Schema` of its version (types, enums, required, formats of
integers) and its metadata against ObjectMeta's rules (name a DNS subdomain, label keys and values);
a violation is a 422 `Invalid` Status listing every field, as the real one does.

Also the built-in validation of `events.k8s.io/v1` Events (ValidateEventCreate: eventTime,
reportingController, reportingInstance, action and reason required, note at most 1 kB, type Normal or
Warning, series with count >= 2 and lastObservedTime).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import jsonschema

DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
LABEL_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
INT32 = (-(2**31), 2**31 - 1)


def _json_schema(schema: Any) -> Any:
    """An OpenAPI v3 (Kubernetes structural) schema as JSON Schema: x-kubernetes-* dropped, nullable honoured."""
    if isinstance(schema, list):
        return [_json_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _json_schema(v) for k, v in schema.items()
           if not k.startswith("x-kubernetes-") and k not in ("nullable", "description", "format")}
    if schema.get("format") == "int32" and schema.get("type") == "integer":
        out.setdefault("minimum", INT32[0])
        out.setdefault("maximum", INT32[1])
    if schema.get("nullable") and "type" in out:
        out["type"] = [out["type"], "null"]
    return out


def prune(obj: Any, schema: dict[str, Any]) -> Any:
    """`obj` without the fields its structural schema does not declare."""
    if schema.get("x-kubernetes-preserve-unknown-fields"):
        return obj
    if isinstance(obj, dict):
        props = schema.get("properties")
        extra = schema.get("additionalProperties")
        if props is not None:
            return {k: prune(v, props[k]) for k, v in obj.items() if k in props}
        if isinstance(extra, dict):
            return {k: prune(v, extra) for k, v in obj.items()}
        return obj
    if isinstance(obj, list) and isinstance(schema.get("items"), dict):
        return [prune(v, schema["items"]) for v in obj]
    return obj


def _path(error: jsonschema.ValidationError) -> str:
    out = ""
    for part in error.absolute_path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "<root>"


def _describe(error: jsonschema.ValidationError) -> str:
    where = _path(error)
    if error.validator == "enum":
        allowed = ", ".join(f'"{v}"' for v in error.validator_value)
        return f'{where}: Unsupported value: "{error.instance}": supported values: {allowed}'
    if error.validator == "required":
        field = error.message.split("'")[1] if "'" in error.message else error.message
        return f"{where}.{field}: Required value" if where != "<root>" else f"{field}: Required value"
    if error.validator == "type":
        return f'{where}: Invalid value: "{type(error.instance).__name__}": {where} in body must be of type ' \
               f"{error.validator_value}"
    return f"{where}: Invalid value: {error.instance!r}: {error.message}"


def metadata_errors(meta: dict[str, Any]) -> list[str]:
    errors = []
    name = str(meta.get("name") or "")
    if len(name) > 253 or not DNS_SUBDOMAIN.fullmatch(name):
        errors.append(f'metadata.name: Invalid value: "{name}": a lowercase RFC 1123 subdomain must consist of '
                      "lower case alphanumeric characters, '-' or '.', and must start and end with an "
                      "alphanumeric character")
    for key, value in (meta.get("labels") or {}).items():
        name_part = str(key).rpartition("/")[2]
        if len(name_part) > 63 or not LABEL_NAME.fullmatch(name_part):
            errors.append(f'metadata.labels: Invalid value: "{key}": name part must be no more than 63 characters')
        if not isinstance(value, str) or len(value) > 63 or not LABEL_VALUE.fullmatch(value):
            errors.append(f'metadata.labels: Invalid value: "{value}": must be no more than 63 characters')
    return errors


@dataclass
class Schema:
    """One served version's structural schema."""

    raw: dict[str, Any]

    def __post_init__(self) -> None:
        self.validator = jsonschema.Draft7Validator(_json_schema(self.raw))

    def admit(self, obj: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
        """(the pruned object, its violations)."""
        pruned = prune({k: v for k, v in obj.items() if k not in ("apiVersion", "kind", "metadata")}, self.raw)
        pruned = {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"), "metadata": obj.get("metadata"),
                  **pruned}
        body = {k: v for k, v in pruned.items() if k != "metadata"}
        errors = sorted(_describe(e) for e in self.validator.iter_errors(body))
        return pruned, metadata_errors(obj.get("metadata") or {}) + errors


def crd_versions(crd: dict[str, Any]) -> list[tuple[str, Schema]]:
    """(version, schema) of every served version of a CustomResourceDefinition."""
    return [(v["name"], Schema(v["schema"]["openAPIV3Schema"])) for v in crd["spec"]["versions"] if v.get("served")]


EVENT_TYPES = ("Normal", "Warning")


def event_errors(event: dict[str, Any]) -> list[str]:
    """events.k8s.io/v1 validation of a created or updated Event (k8s.io/kubernetes pkg/apis/core/validation)."""
    errors = metadata_errors(event.get("metadata") or {})
    for field in ("eventTime", "reportingController", "reportingInstance", "action", "reason"):
        if not event.get(field):
            errors.append(f"{field}: Required value")
    if len(str(event.get("reason") or "")) > 128:
        errors.append("reason: Too long: may not be longer than 128")
    if len(str(event.get("action") or "")) > 128:
        errors.append("action: Too long: may not be longer than 128")
    if len(str(event.get("note") or "").encode()) > 1024:
        errors.append("note: Too long: may not be longer than 1024")
    if event.get("type") not in EVENT_TYPES:
        errors.append(f'type: Unsupported value: "{event.get("type")}": supported values: "Normal", "Warning"')
    regarding = event.get("regarding") or {}
    if regarding.get("namespace") and regarding["namespace"] != (event.get("metadata") or {}).get("namespace"):
        errors.append("regarding.namespace: Invalid value: does not match event.namespace")
    series = event.get("series")
    if series is not None:
        if int(series.get("count") or 0) < 2:
            errors.append("series.count: Invalid value: should be at least 2")
        if not series.get("lastObservedTime"):
            errors.append("series.lastObservedTime: Required value")
    return errors
