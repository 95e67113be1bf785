"""Conflicts: a VM field the instance type owns is already set (upstream `pkg/instancetype/conflict`).

A conflict is a field path; its cause is `{reason: FieldValueInvalid, field: <path>, message:
"VM field(s) <path> conflicts with selected instance type"}` and an error built from several joins
the paths with ", ". Paths are rooted at the base (`spec.template.spec` for a VM, `spec` for a VMI),
except annotation conflicts, which read `annotations.<key>`.

Report order (spec 3.2): nodeSelector, schedulerName, every CPU conflict, the first memory conflict,
ioThreads, ioThreadsPolicy, launchSecurity, gpus, hostDevices, annotations (sorted by key).
"""
from __future__ import annotations

from typing import Final

from instancetype_webhook.kubevirt.causes import FIELD_VALUE_INVALID, Cause, ExpandError

VM_BASE: Final = "spec.template.spec"
VMI_BASE: Final = "spec"


def conflict(base: str, *parts: str) -> Cause:
    path = ".".join((base, *parts)) if base else ".".join(parts)
    return Cause(FIELD_VALUE_INVALID, conflict_message([path]), path)


def annotation_conflict(key: str) -> Cause:
    return conflict("", "annotations", key)


def conflict_message(paths: list[str]) -> str:
    return f"VM field(s) {', '.join(paths)} conflicts with selected instance type"


def conflicts_error(causes: list[Cause]) -> ExpandError:
    """The error `Expand` returns for conflicts (kind `conflict`, one cause per path)."""
    return ExpandError("conflict", conflict_message([c.field for c in causes]), causes)
