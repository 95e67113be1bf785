"""Preference effects written into the VM at submission (spec 2.7; upstream
`pkg/instancetype/webhooks/vm/mutator.go`: mutateArch, mutateMachineType, mutateDataVolumeTemplates).
Runs after inference, on the preference the (inferred) matcher names, and before the generic VM defaults.

    with_submission_preferences(vm, preference_spec) -> vm   (a new VM when anything changes; else `vm`)

1. `spec.template.spec.architecture` <- `preferredArchitecture` when empty;
2. `spec.template.spec.domain.machine.type` <- `machine.preferredMachineType` when empty;
   (1 and 2 only when the VM has a `spec.template`, as upstream)
3. each `spec.dataVolumeTemplates[i].spec.pvc|storage` that exists and has no `storageClassName` (absent
   or null; an empty string is a value) <- `volumes.preferredStorageClassName` (an empty one means none).
The input is never changed: only the objects on a changed path are copied.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def with_submission_preferences(vm: dict[str, Any], preference: Mapping[str, Any] | None) -> dict[str, Any]:
    if not preference or not isinstance(vm.get("spec"), dict):
        return vm
    spec = dict(vm["spec"])
    changed = False
    if isinstance(spec.get("template"), dict):
        template_spec = _template_spec(_dict(spec["template"].get("spec")), preference)
        if template_spec is not None:
            spec["template"] = {**spec["template"], "spec": template_spec}
            changed = True
    templates = _data_volume_templates(spec.get("dataVolumeTemplates"), preference)
    if templates is not None:
        spec["dataVolumeTemplates"] = templates
        changed = True
    return {**vm, "spec": spec} if changed else vm


def _template_spec(template_spec: Mapping[str, Any], preference: Mapping[str, Any]) -> dict[str, Any] | None:
    """The template spec with the preferred architecture and machine type, or None when nothing changes."""
    out = dict(template_spec)
    arch = preference.get("preferredArchitecture")
    if arch and not out.get("architecture"):
        out["architecture"] = arch
    machine_type = _dict(preference.get("machine")).get("preferredMachineType")
    domain = _dict(out.get("domain"))
    if machine_type and not _dict(domain.get("machine")).get("type"):
        out["domain"] = {**domain, "machine": {**_dict(domain.get("machine")), "type": machine_type}}
    return out if len(out) != len(template_spec) or any(out[k] is not template_spec[k] for k in out) else None


def _data_volume_templates(templates: Any, preference: Mapping[str, Any]) -> list[Any] | None:
    """The DataVolumeTemplates with the preferred storage class filled in, or None when nothing changes."""
    storage_class = _dict(preference.get("volumes")).get("preferredStorageClassName")
    if not storage_class or not isinstance(templates, list):
        return None
    out, changed = [], False
    for template in templates:
        dv_spec = _dict(_dict(template).get("spec"))
        filled = {key: {**claim, "storageClassName": storage_class} for key in ("pvc", "storage")
                  if isinstance(claim := dv_spec.get(key), dict) and claim.get("storageClassName") is None}
        if filled:
            template = {**template, "spec": {**dv_spec, **filled}}
            changed = True
        out.append(template)
    return out if changed else None
