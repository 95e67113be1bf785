"""ApplyToVMI (upstream `pkg/instancetype/apply/vmi.go`): the instance type's steps in upstream order, then,
only without conflicts, the preference (`preference/apply.py`). The package's docstring describes both
functions; they live here, not in the package's __init__, so that the compiled build compiles them (it leaves
package __init__ files out).
"""
from __future__ import annotations

from typing import Any

from instancetype_webhook.kubevirt.apply.conflicts import VM_BASE
from instancetype_webhook.kubevirt.apply.cpu import apply_cpu
from instancetype_webhook.kubevirt.apply.devices import apply_gpus, apply_host_devices
from instancetype_webhook.kubevirt.apply.iothreads import apply_io_threads, apply_io_threads_policy
from instancetype_webhook.kubevirt.apply.launchsecurity import apply_launch_security
from instancetype_webhook.kubevirt.apply.memory import apply_memory
from instancetype_webhook.kubevirt.apply.metadata import (
    apply_instancetype_annotations,
    apply_node_selector,
    apply_scheduler_name,
)
from instancetype_webhook.kubevirt.causes import Cause
from instancetype_webhook.kubevirt.preference.apply import apply_preference, as_release_applies
from instancetype_webhook.kubevirt.releases import ReleaseProfile

__all__ = ["apply_instancetype", "apply_to_template"]


def _ensure(parent: dict[str, Any], key: str) -> dict[str, Any]:
    child = parent.get(key)
    if not isinstance(child, dict):
        child = {}
        parent[key] = child
    return child


def apply_instancetype(
    template: dict[str, Any],
    instancetype_spec: dict[str, Any],
    preference_spec: dict[str, Any] | None = None,
    base: str = VM_BASE,
) -> list[Cause]:
    spec = _ensure(template, "spec")
    domain = _ensure(spec, "domain")
    metadata = _ensure(template, "metadata")
    itype = instancetype_spec
    causes: list[Cause] = []
    causes += apply_node_selector(base, itype, spec)
    causes += apply_scheduler_name(base, itype, spec)
    causes += apply_cpu(base, itype, preference_spec, domain)
    causes += apply_memory(base, itype, domain)
    causes += apply_io_threads(base, itype, domain)
    causes += apply_io_threads_policy(base, itype, domain)
    causes += apply_launch_security(base, itype, domain)
    causes += apply_gpus(base, itype, domain)
    causes += apply_host_devices(base, itype, domain)
    causes += apply_instancetype_annotations(itype.get("annotations"), metadata)
    return causes


def apply_to_template(template: dict[str, Any], instancetype_spec: dict[str, Any] | None,
                      preference_spec: dict[str, Any] | None, release: ReleaseProfile,
                      base: str = VM_BASE) -> list[Cause]:
    """Upstream ApplyToVMI as `release` has it: the instance type, then (only without conflicts) the
    preference (`as_release_applies`: what `release` makes of it)."""
    preference_spec = as_release_applies(preference_spec, template, release)
    if instancetype_spec is None and preference_spec is None:
        return []
    if instancetype_spec is not None:
        causes = apply_instancetype(template, instancetype_spec, preference_spec, base)
        if causes:
            return causes
    apply_preference(preference_spec, template)
    return []
