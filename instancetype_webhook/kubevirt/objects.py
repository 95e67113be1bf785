"""Admission of the instance type and preference objects themselves (spec 3.8).

Upstream's admitters first validate the object against the CRD's OpenAPI schema, then run a few
semantic rules; only CREATE and UPDATE are checked. The schema check uses the pydantic models generated
from the CRDs (`instancetype_webhook.kubevirt.models`); failures are worded like kube-openapi's (`spec.cpu.guest in body
is required`), one cause per offending path, with that path as the cause field. Because the schema
bounds `overcommitPercent` to 0..100, the schema answers first for out-of-range values (as the API
server would); the webhook's own range message remains in `instancetype_causes`.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pydantic import ValidationError

from instancetype_webhook.kubevirt.causes import (
    FIELD_VALUE_INVALID,
    FIELD_VALUE_NOT_SUPPORTED,
    FIELD_VALUE_REQUIRED,
    Cause,
    Verdict,
)
from instancetype_webhook.kubevirt.models import MODELS
from instancetype_webhook.kubevirt.preference.topology import (
    ACROSS_CORES_THREADS,
    ACROSS_SOCKETS_CORES,
    ACROSS_SOCKETS_CORES_THREADS,
    DEPRECATED_TOPOLOGIES,
    SPREAD,
    TOPOLOGIES,
    spread_options,
)
from instancetype_webhook.kubevirt.rejection import error, reject
from instancetype_webhook.kubevirt.source import (
    CLUSTER_INSTANCETYPE,
    CLUSTER_PREFERENCE,
    INSTANCETYPE,
    KINDS,
    PREFERENCE,
)

ADMITTED_OPERATIONS = ("CREATE", "UPDATE")
LAUNCH_SECURITY_WARNING = ("launchSecurity is deprecated and will be removed in a future release. "
                           "Use preference instead.")
DEPRECATED_TOPOLOGY_WARNING = ("PreferredCPUTopology {old} is deprecated for removal in a future release, "
                               "please use {new} instead")
CORES_THREADS_RATIO_MSG = "only a ratio of 2 (1 core 2 threads) is allowed when spreading vCPUs over cores and threads"
FIELD_VALUE_TYPE_INVALID = "FieldValueTypeInvalid"

Spec = Mapping[str, Any]


# -- schema (the CRD openAPIV3Schema, through the generated models) ----------------------------------

_OPENAPI_TYPES = {
    "int_type": "integer", "int_parsing": "integer", "int_from_float": "integer", "string_type": "string",
    "bool_type": "boolean", "bool_parsing": "boolean", "float_type": "number", "list_type": "array",
    "dict_type": "object", "model_type": "object", "model_attributes_type": "object",
}


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _real_path(obj: Any, loc: tuple[Any, ...], missing: bool) -> tuple[str, Any]:
    """The JSON path of an error location (pydantic's union tags dropped) and the value found there."""
    parts: list[str] = []
    value = obj
    for index, key in enumerate(loc):
        if (isinstance(value, Mapping) and key in value
                or isinstance(value, list) and isinstance(key, int) and 0 <= key < len(value)):
            value = value[key]
        elif missing and index == len(loc) - 1:
            value = None
        else:
            break
        parts.append(f"[{key}]" if isinstance(key, int) else (f".{key}" if parts else str(key)))
    return "".join(parts), value


def _schema_cause(obj: Mapping[str, Any], problem: Mapping[str, Any]) -> Cause:
    kind = problem["type"]
    path, value = _real_path(obj, tuple(problem["loc"]), kind == "missing")
    ctx = problem.get("ctx") or {}
    if kind == "missing":
        return Cause(FIELD_VALUE_REQUIRED, f"{path} in body is required", path)
    if kind in _OPENAPI_TYPES:
        message = f"{path} in body must be of type {_OPENAPI_TYPES[kind]}: {_json_type(value)!r}"
        return Cause(FIELD_VALUE_TYPE_INVALID, message, path)
    if kind == "greater_than_equal":
        return Cause(FIELD_VALUE_INVALID, f"{path} in body should be greater than or equal to {ctx.get('ge')}", path)
    if kind == "less_than_equal":
        return Cause(FIELD_VALUE_INVALID, f"{path} in body should be less than or equal to {ctx.get('le')}", path)
    if kind == "literal_error":
        return Cause(FIELD_VALUE_NOT_SUPPORTED, f"{path} in body should be one of [{ctx.get('expected')}]", path)
    detail = str(ctx.get("error") or problem.get("msg") or kind)
    return Cause(FIELD_VALUE_INVALID, f"{path} in body is invalid: {detail}", path)


def schema_causes(obj: Mapping[str, Any]) -> list[Cause]:
    """What the CRD schema says about the object: one cause per offending path (unknown fields are pruned)."""
    try:
        MODELS[obj.get("kind", "")].model_validate(obj)
    except ValidationError as exc:
        causes: list[Cause] = []
        for problem in exc.errors(include_url=False):
            cause = _schema_cause(obj, problem)
            if all(cause.field != seen.field for seen in causes):
                causes.append(cause)
        return causes
    return []


# -- semantic rules (pkg/instancetype/webhooks, pkg/instancetype/preference/webhooks) ------------------


def instancetype_causes(spec: Spec) -> list[Cause]:
    memory = spec.get("memory") or {}
    percent = memory.get("overcommitPercent") or 0
    path = "spec.memory.overcommitPercent"
    causes: list[Cause] = []
    if percent < 0 or percent > 100:
        causes.append(Cause(FIELD_VALUE_INVALID, f"{path} '{percent}': must be in range between 0 and 100.", path))
    if percent != 0 and memory.get("hugepages") is not None:
        causes.append(Cause(FIELD_VALUE_INVALID, f"{path} and spec.memory.hugepages should not be requested together.",
                            path))
    return causes


def instancetype_warnings(spec: Spec) -> list[str]:
    return [LAUNCH_SECURITY_WARNING] if spec.get("launchSecurity") is not None else []


def _topology(spec: Spec) -> str | None:
    return (spec.get("cpu") or {}).get("preferredCPUTopology")


def preference_causes(spec: Spec) -> list[Cause]:
    topology = _topology(spec)
    if topology is None:
        return []
    if topology not in TOPOLOGIES and topology not in DEPRECATED_TOPOLOGIES:
        path = "spec.cpu.preferredCPUTopology"
        return [Cause(FIELD_VALUE_INVALID, f"unknown preferredCPUTopology {topology}", path)]
    if DEPRECATED_TOPOLOGIES.get(topology, topology) != SPREAD:
        return []
    ratio, across = spread_options(spec)
    if across not in (ACROSS_CORES_THREADS, ACROSS_SOCKETS_CORES, ACROSS_SOCKETS_CORES_THREADS):
        return [Cause(FIELD_VALUE_INVALID, f"across {across} is not supported", "spec.cpu.spreadOptions.across")]
    if across == ACROSS_CORES_THREADS and ratio != 2:
        return [Cause(FIELD_VALUE_INVALID, CORES_THREADS_RATIO_MSG, "spec.cpu.spreadOptions.ratio")]
    return []


def preference_warnings(spec: Spec) -> list[str]:
    topology = _topology(spec)
    if topology in DEPRECATED_TOPOLOGIES:
        return [DEPRECATED_TOPOLOGY_WARNING.format(old=topology, new=DEPRECATED_TOPOLOGIES[topology])]
    return []


# -- the admitter -------------------------------------------------------------------------------------

_RULES: dict[str, tuple[Callable[[Spec], list[Cause]], Callable[[Spec], list[str]]]] = {
    INSTANCETYPE: (instancetype_causes, instancetype_warnings),
    CLUSTER_INSTANCETYPE: (instancetype_causes, instancetype_warnings),
    PREFERENCE: (preference_causes, preference_warnings),
    CLUSTER_PREFERENCE: (preference_causes, preference_warnings),
}


def admit_object(obj: Mapping[str, Any], operation: str = "CREATE") -> Verdict:
    """The answer of upstream's admitter for one of the four instance type / preference kinds."""
    if operation not in ADMITTED_OPERATIONS:
        return Verdict.allow()
    if not isinstance(obj, Mapping):
        return error("the object is not a JSON object")
    kind = obj.get("kind")
    if not isinstance(kind, str) or kind not in _RULES:  # a list or object kind is unhashable
        return error(f"unsupported kind {kind!r}: expected one of {', '.join(KINDS)}")
    causes = schema_causes(obj)
    if causes:
        return reject(causes)
    semantic, warnings = _RULES[kind]
    causes = semantic(obj["spec"])
    if causes:
        return reject(causes)
    return Verdict.allow(warnings(obj["spec"]))
