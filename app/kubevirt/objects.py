"""Admission of the instance type and preference objects themselves (spec 3.8).

Upstream's admitters first validate the object against the CRD's OpenAPI schema, then run a few
semantic rules; only CREATE and UPDATE are checked. Schema failures are reported the way KubeVirt's
webhook reports them (kube-openapi texts such as `spec.cpu.guest in body is required`), with the
offending path as the cause field.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

from app.kubevirt.apply.topology import (
    ACROSS_CORES_THREADS,
    ACROSS_SOCKETS_CORES,
    ACROSS_SOCKETS_CORES_THREADS,
    DEPRECATED_TOPOLOGIES,
    SPREAD,
    TOPOLOGIES,
    spread_options,
)
from app.kubevirt.causes import FIELD_VALUE_INVALID, FIELD_VALUE_REQUIRED, Cause, Verdict
from app.kubevirt.quantity import QuantityError, parse
from app.kubevirt.source import CLUSTER_INSTANCETYPE, CLUSTER_PREFERENCE, INSTANCETYPE, KINDS, PREFERENCE

ADMITTED_OPERATIONS = ("CREATE", "UPDATE")
LAUNCH_SECURITY_WARNING = "launchSecurity is deprecated and will be removed in a future release. Use preference instead."
DEPRECATED_TOPOLOGY_WARNING = "PreferredCPUTopology {old} is deprecated for removal in a future release, please use {new} instead"
CORES_THREADS_RATIO_MSG = "only a ratio of 2 (1 core 2 threads) is allowed when spreading vCPUs over cores and threads"
FIELD_VALUE_TYPE_INVALID = "FieldValueTypeInvalid"

Spec = Mapping[str, Any]


# -- schema (the parts of the CRD openAPIV3Schema the admitters rely on) -------------------------------


def _required(path: str) -> Cause:
    return Cause(FIELD_VALUE_REQUIRED, f"{path} in body is required", path)


def _wrong_type(path: str, expected: str, value: Any) -> Cause:
    return Cause(FIELD_VALUE_TYPE_INVALID, f"{path} in body must be of type {expected}: {_json_type(value)!r}", path)


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


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _object(spec: Spec, key: str, path: str, causes: list[Cause], required: bool = False) -> Mapping[str, Any] | None:
    value = spec.get(key)
    if value is None:
        if required:
            causes.append(_required(f"{path}.{key}"))
        return None
    if not isinstance(value, Mapping):
        causes.append(_wrong_type(f"{path}.{key}", "object", value))
        return None
    return value


def _integer(spec: Spec, key: str, path: str, causes: list[Cause], required: bool = False) -> None:
    value = spec.get(key)
    if value is None:
        if required:
            causes.append(_required(f"{path}.{key}"))
    elif not _is_int(value):
        causes.append(_wrong_type(f"{path}.{key}", "integer", value))


def _quantity(spec: Spec, key: str, path: str, causes: list[Cause], required: bool = False) -> None:
    value = spec.get(key)
    if value is None:
        if required:
            causes.append(_required(f"{path}.{key}"))
        return
    try:
        parse(value)
    except QuantityError:
        causes.append(Cause(FIELD_VALUE_INVALID, f"{path}.{key} in body must be a quantity: {value!r}", f"{path}.{key}"))


def _named_items(spec: Spec, key: str, path: str, causes: list[Cause]) -> None:
    items = spec.get(key)
    if items is None:
        return
    if not isinstance(items, list):
        causes.append(_wrong_type(f"{path}.{key}", "array", items))
        return
    for index, item in enumerate(items):
        if not isinstance(item, Mapping):
            causes.append(_wrong_type(f"{path}.{key}[{index}]", "object", item))
        elif not item.get("name"):
            causes.append(_required(f"{path}.{key}[{index}].name"))


def instancetype_schema_causes(spec: Spec) -> list[Cause]:
    causes: list[Cause] = []
    cpu = _object(spec, "cpu", "spec", causes, required=True)
    if cpu is not None:
        _integer(cpu, "guest", "spec.cpu", causes, required=True)
        _integer(cpu, "maxSockets", "spec.cpu", causes)
    memory = _object(spec, "memory", "spec", causes, required=True)
    if memory is not None:
        _quantity(memory, "guest", "spec.memory", causes, required=True)
        _quantity(memory, "maxGuest", "spec.memory", causes)
        _integer(memory, "overcommitPercent", "spec.memory", causes)
    _named_items(spec, "gpus", "spec", causes)
    _named_items(spec, "hostDevices", "spec", causes)
    return causes


def preference_schema_causes(spec: Spec) -> list[Cause]:
    causes: list[Cause] = []
    cpu = _object(spec, "cpu", "spec", causes)
    if cpu is not None:
        _named_items(cpu, "preferredCPUFeatures", "spec.cpu", causes)
        options = _object(cpu, "spreadOptions", "spec.cpu", causes)
        if options is not None:
            _integer(options, "ratio", "spec.cpu.spreadOptions", causes)
    _integer(spec, "preferSpreadSocketToCoreRatio", "spec", causes)
    requirements = _object(spec, "requirements", "spec", causes)
    if requirements is not None:
        req_cpu = _object(requirements, "cpu", "spec.requirements", causes)
        if req_cpu is not None:
            _integer(req_cpu, "guest", "spec.requirements.cpu", causes, required=True)
        req_memory = _object(requirements, "memory", "spec.requirements", causes)
        if req_memory is not None:
            _quantity(req_memory, "guest", "spec.requirements.memory", causes, required=True)
    return causes


# -- semantic rules (pkg/instancetype/webhooks, pkg/instancetype/preference/webhooks) ------------------


def instancetype_causes(spec: Spec) -> list[Cause]:
    memory = spec.get("memory") or {}
    percent = memory.get("overcommitPercent") or 0
    path = "spec.memory.overcommitPercent"
    causes: list[Cause] = []
    if percent < 0 or percent > 100:
        causes.append(Cause(FIELD_VALUE_INVALID, f"{path} '{percent}': must be in range between 0 and 100.", path))
    if percent != 0 and memory.get("hugepages") is not None:
        causes.append(Cause(FIELD_VALUE_INVALID, f"{path} and spec.memory.hugepages should not be requested together.", path))
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

_RULES: dict[str, tuple[Callable[[Spec], list[Cause]], Callable[[Spec], list[Cause]], Callable[[Spec], list[str]]]] = {
    INSTANCETYPE: (instancetype_schema_causes, instancetype_causes, instancetype_warnings),
    CLUSTER_INSTANCETYPE: (instancetype_schema_causes, instancetype_causes, instancetype_warnings),
    PREFERENCE: (preference_schema_causes, preference_causes, preference_warnings),
    CLUSTER_PREFERENCE: (preference_schema_causes, preference_causes, preference_warnings),
}


def admit_object(obj: Mapping[str, Any], operation: str = "CREATE") -> Verdict:
    """The answer of upstream's admitter for one of the four instance type / preference kinds."""
    if operation not in ADMITTED_OPERATIONS:
        return Verdict.allow()
    if not isinstance(obj, Mapping):
        return Verdict(allowed=False, code=400, message="the object is not a JSON object")
    kind = obj.get("kind")
    if kind not in _RULES:
        return Verdict(allowed=False, code=400, message=f"unsupported kind {kind!r}: expected one of {', '.join(KINDS)}")
    spec = obj.get("spec")
    if spec is None:
        return Verdict.deny([_required("spec")])
    if not isinstance(spec, Mapping):
        return Verdict.deny([_wrong_type("spec", "object", spec)])
    schema, semantic, warnings = _RULES[kind]
    causes = schema(spec) or semantic(spec)
    if causes:
        return Verdict.deny(causes)
    return Verdict.allow(warnings(spec))
