"""Preference effects written into the VM at submission (spec 2.7; upstream
`pkg/instancetype/webhooks/vm/mutator.go`). Runs after inference and before the generic VM defaults.

    apply_submission_preferences(vm, preference_spec) -> None   (mutates `vm` in place)

1. `spec.template.spec.architecture` <- `preferredArchitecture` when empty;
2. `spec.template.spec.domain.machine.type` <- `machine.preferredMachineType` when empty;
3. each `spec.dataVolumeTemplates[i].spec.pvc|storage.storageClassName` that is nil <-
   `volumes.preferredStorageClassName` (an empty preference means none).
"""
from __future__ import annotations

from typing import Any


def apply_submission_preferences(vm: dict[str, Any], preference: dict[str, Any] | None) -> None:
    if not preference:
        return
    spec = vm.setdefault("spec", {})
    template_spec = spec.setdefault("template", {}).setdefault("spec", {})
    arch = preference.get("preferredArchitecture")
    if arch and not template_spec.get("architecture"):
        template_spec["architecture"] = arch
    machine_type = (preference.get("machine") or {}).get("preferredMachineType")
    if machine_type:
        domain = template_spec.setdefault("domain", {})
        machine = domain.get("machine") or {}
        if not machine.get("type"):
            domain["machine"] = {**machine, "type": machine_type}
    storage_class = (preference.get("volumes") or {}).get("preferredStorageClassName")
    if storage_class:
        for template in spec.get("dataVolumeTemplates") or []:
            dv_spec = template.get("spec") or {}
            for key in ("pvc", "storage"):
                claim = dv_spec.get(key)
                if isinstance(claim, dict) and claim.get("storageClassName") is None:
                    claim["storageClassName"] = storage_class
