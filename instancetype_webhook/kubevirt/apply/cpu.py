"""Instance type CPU (upstream `apply/cpu.go`): conflicts first (all of them), then copy the
instance type's CPU fields and compute the topology from `cpu.guest` and the preference."""
from __future__ import annotations

from typing import Any, Final

from instancetype_webhook.kubevirt.apply.conflicts import conflict
from instancetype_webhook.kubevirt.causes import Cause
from instancetype_webhook.kubevirt.goshape import ANY, REALTIME, go_clone
from instancetype_webhook.kubevirt.preference.topology import guest_topology


def cpu_conflicts(base: str, itype_cpu: dict[str, Any], domain: dict[str, Any]) -> list[Cause]:
    cpu = domain.get("cpu") or {}
    resources = domain.get("resources") or {}
    requests = resources.get("requests") or {}
    limits = resources.get("limits") or {}
    causes = []
    if "cpu" in requests:
        causes.append(conflict(base, "domain", "resources", "requests", "cpu"))
    if "cpu" in limits:
        causes.append(conflict(base, "domain", "resources", "limits", "cpu"))
    for name in ("sockets", "cores", "threads"):
        if cpu.get(name):
            causes.append(conflict(base, "domain", "cpu", name))
    if cpu.get("model") and itype_cpu.get("model") is not None:
        causes.append(conflict(base, "domain", "cpu", "model"))
    if cpu.get("dedicatedCpuPlacement") and itype_cpu.get("dedicatedCPUPlacement") is not None:
        causes.append(conflict(base, "domain", "cpu", "dedicatedCPUPlacement"))
    if cpu.get("isolateEmulatorThread") and itype_cpu.get("isolateEmulatorThread") is not None:
        causes.append(conflict(base, "domain", "cpu", "isolateEmulatorThread"))
    for name in ("numa", "realtime"):
        if cpu.get(name) is not None and itype_cpu.get(name) is not None:
            causes.append(conflict(base, "domain", "cpu", name))
    return causes


# instance type key -> VMI key, copied whenever the instance type sets them
_COPIED: Final[tuple[tuple[str, str], ...]] = (
    ("model", "model"),
    ("dedicatedCPUPlacement", "dedicatedCpuPlacement"),
    ("isolateEmulatorThread", "isolateEmulatorThread"),
    ("numa", "numa"),
    ("realtime", "realtime"),
    ("maxSockets", "maxSockets"),
)


def apply_cpu(
    base: str, itype: dict[str, Any], preference: dict[str, Any] | None, domain: dict[str, Any]
) -> list[Cause]:
    itype_cpu = itype.get("cpu") or {}
    causes = cpu_conflicts(base, itype_cpu, domain)
    if causes:
        return causes
    cpu = domain.get("cpu")
    cpu = dict(cpu) if cpu else {}
    for src, dst in _COPIED:
        value = itype_cpu.get(src)
        if value is not None:
            _set_or_drop(cpu, dst, go_clone(value, REALTIME if dst == "realtime" else ANY))
    sockets, cores, threads = guest_topology(int(itype_cpu.get("guest") or 0), preference)
    for key, count in (("cores", cores), ("sockets", sockets), ("threads", threads)):
        _set_or_drop(cpu, key, count)
    domain["cpu"] = cpu
    return []


def _set_or_drop(cpu: dict[str, Any], key: str, value: Any) -> None:
    """Set a non-pointer omitempty field; its zero value is simply not printed by Go."""
    if value is False or value == 0 or value == "":
        cpu.pop(key, None)
    else:
        cpu[key] = value
