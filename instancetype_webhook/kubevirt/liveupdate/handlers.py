"""The live handlers of virt-controller's VM sync (pkg/virt-controller/watch/vm/vm.go), in their order:
`handleCPUChangeRequest` (+ `VMICPUsPatch`), `handleAffinityChangeRequest`, `handleTolerationsChangeRequest`,
`handleMemoryHotplugRequest`. Each compares the expanded VM with the running VMI (not with the VM as
started) and either patches the VMI, asks for a restart (the first message stays), or fails the sync
(a transient error: another hotplug or a migration in progress)."""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Final

from instancetype_webhook.kubevirt.jsondata import clone_tree
from instancetype_webhook.kubevirt.liveupdate.hotplug import validate_live_update_memory, vcpus
from instancetype_webhook.kubevirt.liveupdate.model import SyncError
from instancetype_webhook.kubevirt.liveupdate.network import is_migratable
from instancetype_webhook.kubevirt.liveupdate.semantic import semantic_equal
from instancetype_webhook.kubevirt.quantity import (
    BINARY_SI,
    DECIMAL_SI,
    QuantityError,
    canonical,
    format_quantity,
    parse,
)

CPU_ERROR: Final = ("HotPlugCPUError", "Error encountered while handling CPU change request: ")
AFFINITY_ERROR: Final = ("AffinityChangeError", "Error encountered while handling node affinity change request: ")
TOLERATIONS_ERROR: Final = ("TolerationsChangeError", "Error encountered while handling tolerations change request: ")
MEMORY_ERROR: Final = ("HotPlugMemoryError", "error encountered while handling memory hotplug requests: ")


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


@dataclass
class Sync:
    """The running state of one sync pass: the VMI being patched, what was patched, the restart message."""

    vmi: dict[str, Any]
    cpu_allocation_ratio: int = 10
    patched: dict[str, Any] = field(default_factory=dict)
    restart: str | None = None

    def restart_required(self, message: str) -> None:
        if self.restart is None:  # UpdateCondition keeps a condition of the same status and reason
            self.restart = message

    def set(self, path: str, value: Any) -> None:
        node = self.vmi
        keys = path.split(".")
        for key in keys[:-1]:
            if not isinstance(node.get(key), dict):
                node[key] = {}
            node = node[key]
        if value is None:
            node.pop(keys[-1], None)
        else:
            node[keys[-1]] = clone_tree(value)
        self.patched[path] = clone_tree(value)


def _has_condition(vmi: dict[str, Any], kind: str, status: str) -> bool:
    return any(c.get("type") == kind and c.get("status") == status
               for c in _obj(vmi.get("status")).get("conditions") or [] if isinstance(c, dict))


def is_migrating(vmi: dict[str, Any]) -> bool:
    """migrations.IsMigrating: a migration state that started and has not ended."""
    state = _obj(_obj(vmi.get("status")).get("migrationState"))
    return bool(state.get("startTimestamp")) and not state.get("endTimestamp")


def _vmi_domain(vmi: dict[str, Any]) -> dict[str, Any]:
    return _obj(_obj(vmi.get("spec")).get("domain"))


def _quantity(value: Any) -> Fraction:
    try:
        return parse(value).value if value is not None else Fraction(0)
    except QuantityError:
        return Fraction(0)


def _resource(resources: dict[str, Any], group: str, name: str) -> Fraction:
    return _quantity(_obj(resources.get(group)).get(name))


def handle_cpu(new: dict[str, Any], sync: Sync) -> SyncError | None:
    """handleCPUChangeRequest on the expanded VM template spec `new`."""
    vm_cpu, vmi_cpu = new.get("domain", {}).get("cpu"), _vmi_domain(sync.vmi).get("cpu")
    if not isinstance(vm_cpu, dict) or not isinstance(vmi_cpu, dict):
        return None
    sockets, vmi_sockets = int(vm_cpu.get("sockets") or 0), int(vmi_cpu.get("sockets") or 0)
    if sockets == vmi_sockets:
        return None
    if _has_condition(sync.vmi, "HotVCPUChange", "True"):
        return SyncError(CPU_ERROR[0], CPU_ERROR[1] + "another CPU hotplug is in progress")
    if is_migrating(sync.vmi):
        return SyncError(CPU_ERROR[0], CPU_ERROR[1] + "CPU hotplug is not allowed while VMI is migrating")
    if sockets > int(vmi_cpu.get("maxSockets") or 0):
        sync.restart_required("CPU sockets updated in template spec to a value higher than what's available")
    elif sockets < vmi_sockets:
        sync.restart_required("Reduction of CPU socket count requires a restart")
    elif new.get("architecture") == "arm64":
        sync.restart_required("ARM doesn't support CPU hotplug")
    else:
        _patch_cpus(new, vm_cpu, vmi_cpu, sync)
    return None


def _patch_cpus(new: dict[str, Any], vm_cpu: dict[str, Any], vmi_cpu: dict[str, Any], sync: Sync) -> None:
    """VMICPUsPatch: sockets, and the CPU request/limit grown by the vCPU delta at cpuAllocationRatio."""
    delta = Fraction((vcpus(vm_cpu) - vcpus(vmi_cpu)) * int(1000 / sync.cpu_allocation_ratio), 1000)
    sync.set("spec.domain.cpu.sockets", int(vm_cpu.get("sockets") or 0))
    vm_resources = _obj(_obj(new.get("domain")).get("resources"))
    vmi_resources = _obj(_vmi_domain(sync.vmi).get("resources"))
    for group in ("requests", "limits"):
        if _resource(vm_resources, group, "cpu") == 0:
            continue
        value = format_quantity(_resource(vmi_resources, group, "cpu") + delta, DECIMAL_SI)
        sync.set(f"spec.domain.resources.{group}", {**_obj(vmi_resources.get(group)), "cpu": value})
        vmi_resources = _obj(_vmi_domain(sync.vmi).get("resources"))


def handle_affinity(new: dict[str, Any], sync: Sync) -> SyncError | None:
    spec = _obj(sync.vmi.get("spec"))
    selector_changed = not semantic_equal(new.get("nodeSelector"), spec.get("nodeSelector"))
    affinity_changed = not semantic_equal(new.get("affinity"), spec.get("affinity"))
    if is_migrating(sync.vmi) and (selector_changed or affinity_changed):
        return SyncError(AFFINITY_ERROR[0],
                         AFFINITY_ERROR[1] + "Node affinity should not be changed during VMI migration")
    if affinity_changed:
        sync.set("spec.affinity", new.get("affinity"))
    if selector_changed:
        sync.set("spec.nodeSelector", new.get("nodeSelector"))
    return None


def handle_tolerations(new: dict[str, Any], sync: Sync) -> SyncError | None:
    if semantic_equal(new.get("tolerations"), _obj(sync.vmi.get("spec")).get("tolerations")):
        return None
    if is_migrating(sync.vmi):
        return SyncError(TOLERATIONS_ERROR[0],
                         TOLERATIONS_ERROR[1] + "tolerations should not be changed during VMI migration")
    sync.set("spec.tolerations", new.get("tolerations"))
    return None


def handle_memory(new: dict[str, Any], sync: Sync) -> SyncError | None:
    """handleMemoryHotplugRequest on the expanded VM template spec `new`."""
    memory = _obj(_obj(new.get("domain")).get("memory"))
    vmi_memory = _obj(_vmi_domain(sync.vmi).get("memory"))
    status_memory = _obj(_obj(sync.vmi.get("status")).get("memory"))
    if memory.get("guest") is None or vmi_memory.get("guest") is None or status_memory.get("guestCurrent") is None:
        return None
    if _has_condition(sync.vmi, "HotMemoryChange", "False"):
        sync.restart_required("memory updated in template spec. Memory-hotplug failed and is not available "
                              "for this VM configuration")
        return None
    guest = _quantity(memory["guest"])
    if guest == _quantity(vmi_memory["guest"]):
        return None
    if not is_migratable(sync.vmi):
        sync.restart_required("memory updated in template spec. Memory-hotplug is only available for migratable VMs")
        return None
    if vmi_memory.get("maxGuest") is None:
        sync.restart_required("memory updated in template spec. Memory-hotplug is not available for this VM "
                              "configuration")
        return None
    if _has_condition(sync.vmi, "HotMemoryChange", "True"):
        return SyncError(MEMORY_ERROR[0], MEMORY_ERROR[1] + "another memory hotplug is in progress")
    if is_migrating(sync.vmi):
        return SyncError(MEMORY_ERROR[0], MEMORY_ERROR[1] + "memory hotplug is not allowed while VMI is migrating")
    invalid = validate_live_update_memory(new, vmi_memory["maxGuest"])
    if invalid is not None:
        sync.restart_required(f"memory hotplug not supported, {invalid}")
    elif status_memory.get("guestAtBoot") is not None and guest < _quantity(status_memory["guestAtBoot"]):
        sync.restart_required("memory updated in template spec to a value lower than what the VM started with")
    elif guest > _quantity(vmi_memory["maxGuest"]):
        sync.restart_required("memory updated in template spec to a value higher than what's available")
    else:
        _patch_memory(new, memory, guest, status_memory, sync)
    return None


def _patch_memory(new: dict[str, Any], memory: dict[str, Any], guest: Fraction, status_memory: dict[str, Any],
                  sync: Sync) -> None:
    delta = guest - _quantity(status_memory["guestCurrent"])
    sync.set("spec.domain.memory.guest", canonical(memory["guest"]))
    vmi_resources = _obj(_vmi_domain(sync.vmi).get("resources"))
    request = _resource(vmi_resources, "requests", "memory")
    if request != 0:
        new_request = request + delta
        if new_request < guest:
            new_request = guest
            delta = guest - new_request
        requests = {**_obj(vmi_resources.get("requests")), "memory": format_quantity(new_request, BINARY_SI)}
        sync.set("spec.domain.resources.requests", requests)
        vmi_resources = _obj(_vmi_domain(sync.vmi).get("resources"))
    if _resource(_obj(_obj(new.get("domain")).get("resources")), "limits", "memory") != 0:
        limit = _resource(vmi_resources, "limits", "memory") + delta
        sync.set("spec.domain.resources.limits",
                 {**_obj(vmi_resources.get("limits")), "memory": format_quantity(limit, BINARY_SI)})


def hotplug_conditions(vmi: dict[str, Any]) -> list[str]:
    """The conditions the VMI controller adds (requireCPUHotplug / requireMemoryHotplug), if not present."""
    domain, status = _vmi_domain(vmi), _obj(vmi.get("status"))
    out: list[str] = []
    cpu, topology = _obj(domain.get("cpu")), status.get("currentCPUTopology")
    if isinstance(topology, dict) and cpu and cpu.get("maxSockets") and vcpus(cpu) != vcpus(topology):
        out.append("HotVCPUChange")
    memory, status_memory = _obj(domain.get("memory")), status.get("memory")
    if (isinstance(status_memory, dict) and memory.get("guest") is not None and memory.get("maxGuest") is not None
            and _quantity(memory["guest"]) != _quantity(status_memory.get("guestRequested"))):
        out.append("HotMemoryChange")
    present = {c.get("type") for c in status.get("conditions") or [] if isinstance(c, dict)}
    return [kind for kind in out if kind not in present]
