"""Conformance inputs -> (vm, Source), and expansion outcomes -> the `expected` shape."""
from __future__ import annotations

from typing import Any

from instancetype_webhook.kubevirt.causes import ExpandError
from instancetype_webhook.kubevirt.configuration import settings_from_configuration
from instancetype_webhook.kubevirt.expand import expand
from instancetype_webhook.kubevirt.source import InMemorySource

OBJECT_KEYS = ("instancetypes", "clusterInstancetypes", "preferences", "clusterPreferences", "controllerRevisions")


def source_for(case_input: dict[str, Any]) -> InMemorySource:
    ns = case_input.get("namespace") or (case_input["vm"].get("metadata") or {}).get("namespace") or "default"
    objects = [obj for key in OBJECT_KEYS for obj in case_input.get(key) or []]
    return InMemorySource(objects, default_namespace=ns)


def expand_outcome(case: dict[str, Any]) -> dict[str, Any]:
    case_input = case["input"]
    try:
        settings = settings_from_configuration(case_input.get("kubevirtConfiguration"))
        return {"vm": expand(case_input["vm"], source_for(case_input), settings)}
    except ExpandError as err:
        out: dict[str, Any] = {"error": err.message, "kind": err.kind}
        if err.causes:
            out["causes"] = [c.to_dict() for c in err.causes]
        return out


def outcome_difference(actual: dict[str, Any], expected: dict[str, Any]) -> str | None:
    from tests.kit.semantic import first_difference

    if "vm" in expected:
        if "vm" not in actual:
            return f"expected success, got {actual.get('kind')}: {actual.get('error')}"
        return first_difference(actual["vm"], expected["vm"])
    if "vm" in actual:
        return f"expected {expected['kind']}: {expected['error']}, got success"
    if actual["kind"] != expected["kind"]:
        return f"kind {actual['kind']}, expected {expected['kind']}"
    fields = {c.get("field", "") for c in actual.get("causes", [])}
    want = {c.get("field", "") for c in expected.get("causes", [])}
    if fields != want:
        return f"cause fields {sorted(fields)}, expected {sorted(want)}"
    if actual["error"] != expected["error"]:
        return f"message {actual['error']!r}, expected {expected['error']!r}"
    got_msgs = [c.get("message") for c in actual.get("causes", [])]
    want_msgs = [c.get("message") for c in expected.get("causes", [])]
    if got_msgs != want_msgs:
        return f"cause messages {got_msgs}, expected {want_msgs}"
    return None
