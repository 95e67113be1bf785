"""Applying an instance type to a VMI spec (upstream `pkg/instancetype/apply`).

    apply_instancetype(template, instancetype_spec, preference_spec=None, base="spec.template.spec")
        -> list[Cause]

`template` is `{"metadata": ..., "spec": <VMI spec>}` (a VM's `spec.template`, or a VMI's metadata and
spec). It is MUTATED in place: pass a copy. Steps run in upstream order; each checks its conflicts and
writes nothing when it has some, and every step runs. The returned causes are the conflicts, with
paths rooted at `base` (annotation conflicts read `annotations.<key>`). The preference spec only
shapes the CPU topology here; `apply_to_template` (apply/vmi.py) also applies the preference when there are no
conflicts, as upstream's ApplyToVMI does.
"""
from __future__ import annotations

from instancetype_webhook.kubevirt.apply.conflicts import VM_BASE, VMI_BASE, conflict, conflicts_error
from instancetype_webhook.kubevirt.apply.vmi import apply_instancetype

__all__ = ["VMI_BASE", "VM_BASE", "apply_instancetype", "conflict", "conflicts_error"]
