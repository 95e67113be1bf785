"""A VirtualMachineInstance built from a (flat, already expanded) VirtualMachine, as virt-controller does."""
from __future__ import annotations

import copy
import uuid
from typing import Any, Final

from instancetype_webhook.domxml.errors import DomainError

# virt-controller's namespace for the name-based ("legacy") firmware UUID.
FIRMWARE_UUID_NAMESPACE: Final = uuid.UUID("6a1a24a1-4061-4607-8bf4-a3963d0c5895")
# Our own namespace for a stable VMI uid when none is given (a real VMI gets a random one).
VMI_UID_NAMESPACE: Final = uuid.UUID("c0c3a4a8-9b1e-4a57-9d0e-6b6f1f0e5d11")


def firmware_uuid(vm_name: str) -> str:
    return str(uuid.uuid5(FIRMWARE_UUID_NAMESPACE, vm_name))


def vmi_from_vm(vm: dict[str, Any], uid: str | None = None) -> dict[str, Any]:
    """The VMI virt-controller would create for ``vm`` (its template, name, namespace, a uid, firmware uuid)."""
    if not isinstance(vm, dict) or not isinstance(vm.get("spec"), dict):
        raise DomainError("not a VirtualMachine: spec is missing")
    template = vm["spec"].get("template")
    if not isinstance(template, dict) or not isinstance(template.get("spec"), dict):
        raise DomainError("VirtualMachine has no spec.template.spec")
    meta = vm.get("metadata") or {}
    name = meta.get("name")
    if not name:
        raise DomainError("VirtualMachine has no metadata.name")
    namespace = meta.get("namespace") or "default"
    tmeta = template.get("metadata") or {}
    spec = copy.deepcopy(template["spec"])
    domain = spec.setdefault("domain", {})
    firmware = domain.get("firmware") or {}
    if not firmware.get("uuid"):
        firmware = {**firmware, "uuid": firmware_uuid(name)}
    domain["firmware"] = firmware
    devices = domain.setdefault("devices", {})
    if devices.get("autoattachInputDevice") and not devices.get("inputs"):
        devices["inputs"] = [{"name": "default-0"}]  # bus and type come from the VMI defaults
    vmi_meta: dict[str, Any] = {
        "name": name,
        "namespace": namespace,
        "uid": uid or str(uuid.uuid5(VMI_UID_NAMESPACE, f"{namespace}/{name}")),
    }
    if tmeta.get("labels"):
        vmi_meta["labels"] = copy.deepcopy(tmeta["labels"])
    if tmeta.get("annotations"):
        vmi_meta["annotations"] = copy.deepcopy(tmeta["annotations"])
    return {
        "apiVersion": "kubevirt.io/v1",
        "kind": "VirtualMachineInstance",
        "metadata": vmi_meta,
        "spec": spec,
    }
