"""ApplyToVMI (upstream `pkg/instancetype/apply/vmi.go`): the instance type's steps (apply/), then, only
without conflicts, the preference's (preference/apply.py)."""
from __future__ import annotations

from typing import Any

from instancetype_webhook.kubevirt.apply.conflicts import VM_BASE
from instancetype_webhook.kubevirt.apply.vmi import apply_instancetype
from instancetype_webhook.kubevirt.causes import Cause
from instancetype_webhook.kubevirt.preference.apply import apply_preference


def apply_to_template(
    template: dict[str, Any],
    instancetype_spec: dict[str, Any] | None,
    preference_spec: dict[str, Any] | None,
    base: str = VM_BASE,
) -> list[Cause]:
    """Upstream ApplyToVMI: the instance type, then (only without conflicts) the preference."""
    if instancetype_spec is None and preference_spec is None:
        return []
    if instancetype_spec is not None:
        causes = apply_instancetype(template, instancetype_spec, preference_spec, base)
        if causes:
            return causes
    apply_preference(preference_spec, template)
    return []
