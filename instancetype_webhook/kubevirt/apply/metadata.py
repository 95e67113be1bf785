"""Instance type nodeSelector, schedulerName and annotations (upstream `apply/nodeselector.go`,
`scheduler.go`, `annotations.go`); the preference's annotations are `preference/apply.py`'s."""
from __future__ import annotations

from typing import Any

from instancetype_webhook.kubevirt.apply.conflicts import annotation_conflict, conflict
from instancetype_webhook.kubevirt.causes import Cause


def apply_node_selector(base: str, itype: dict[str, Any], spec: dict[str, Any]) -> list[Cause]:
    wanted = itype.get("nodeSelector")
    if wanted is None:
        return []
    if spec.get("nodeSelector") is not None:  # even an empty map conflicts
        return [conflict(base, "nodeSelector")]
    if wanted:  # an empty map is copied too, but Go does not print it
        spec["nodeSelector"] = dict(wanted)
    return []


def apply_scheduler_name(base: str, itype: dict[str, Any], spec: dict[str, Any]) -> list[Cause]:
    wanted = itype.get("schedulerName")
    if not wanted:
        return []
    if spec.get("schedulerName"):
        return [conflict(base, "schedulerName")]
    spec["schedulerName"] = wanted
    return []


def apply_instancetype_annotations(annotations: dict[str, str] | None, metadata: dict[str, Any]) -> list[Cause]:
    """Add missing keys; the same key with a different value is one conflict per key (sorted)."""
    if not annotations:
        return []
    current = metadata.get("annotations") or {}
    causes = [annotation_conflict(k) for k in sorted(annotations) if k in current and current[k] != annotations[k]]
    if causes:
        return causes
    missing = {k: v for k, v in annotations.items() if k not in current}
    if missing:
        metadata["annotations"] = {**current, **missing}
    return []
