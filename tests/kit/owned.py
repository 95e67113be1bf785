"""An independent statement of which VM fields an instance type owns (spec 2.3, 2.3.1, 2.5 and 3.2).

Written from the specification's tables, not from instancetype_webhook/kubevirt/apply: `expected_conflicts(vm, spec)` is
the list of conflict paths, in upstream's report order, that referencing the instance type `spec`
must produce for `vm`. "Unset" is Go's zero value: absent, null, 0, "", false, an empty list.
"""
from __future__ import annotations

from typing import Any

BASE = "spec.template.spec"


def _set(value: Any) -> bool:
    return value not in (None, 0, "", False, [])


def _present(mapping: Any, key: str) -> bool:
    return isinstance(mapping, dict) and key in mapping and mapping[key] is not None


def _cpu(domain: dict[str, Any], cpu_spec: dict[str, Any]) -> list[str]:
    cpu = domain.get("cpu") or {}
    resources = domain.get("resources") or {}
    paths = []
    if _present(resources.get("requests"), "cpu"):
        paths.append("domain.resources.requests.cpu")
    if _present(resources.get("limits"), "cpu"):
        paths.append("domain.resources.limits.cpu")
    paths += [f"domain.cpu.{key}" for key in ("sockets", "cores", "threads") if _set(cpu.get(key))]
    if _set(cpu.get("model")) and cpu_spec.get("model") is not None:
        paths.append("domain.cpu.model")
    if cpu.get("dedicatedCpuPlacement") is True and cpu_spec.get("dedicatedCPUPlacement") is not None:
        paths.append("domain.cpu.dedicatedCPUPlacement")
    if cpu.get("isolateEmulatorThread") is True and cpu_spec.get("isolateEmulatorThread") is not None:
        paths.append("domain.cpu.isolateEmulatorThread")
    for key in ("numa", "realtime"):
        if cpu.get(key) is not None and cpu_spec.get(key) is not None:
            paths.append(f"domain.cpu.{key}")
    return paths


def _memory(domain: dict[str, Any], memory_spec: dict[str, Any]) -> list[str]:
    memory = domain.get("memory") or {}
    resources = domain.get("resources") or {}
    candidates = [
        ("domain.memory.guest", memory.get("guest") is not None),
        ("domain.memory.hugepages", memory.get("hugepages") is not None and memory_spec.get("hugepages") is not None),
        ("domain.memory.maxGuest", memory.get("maxGuest") is not None and memory_spec.get("maxGuest") is not None),
        ("domain.resources.requests.memory", _present(resources.get("requests"), "memory")),
        ("domain.resources.limits.memory", _present(resources.get("limits"), "memory")),
    ]
    return next(([path] for path, hit in candidates if hit), [])  # only the first memory conflict


def expected_conflicts(vm: dict[str, Any], spec: dict[str, Any]) -> list[str]:
    template = vm["spec"]["template"]
    vmi = template.get("spec") or {}
    domain = vmi.get("domain") or {}
    devices = domain.get("devices") or {}
    paths: list[str] = []
    if spec.get("nodeSelector") is not None and vmi.get("nodeSelector") is not None:  # even an empty map
        paths.append("nodeSelector")
    if _set(spec.get("schedulerName")) and _set(vmi.get("schedulerName")):
        paths.append("schedulerName")
    paths += _cpu(domain, spec["cpu"])
    paths += _memory(domain, spec["memory"])
    threads, vm_threads = spec.get("ioThreads") or {}, domain.get("ioThreads") or {}
    pool = "supplementalPoolThreadCount"
    if threads.get(pool) is not None and vm_threads.get(pool) is not None:
        paths.append("domain.ioThreads.supplementalPoolThreadCount")
    for key in ("ioThreadsPolicy", "launchSecurity"):
        if spec.get(key) is not None and domain.get(key) is not None:
            paths.append(f"domain.{key}")
    for key in ("gpus", "hostDevices"):
        if _set(spec.get(key)) and _set(devices.get(key)):
            paths.append(f"domain.devices.{key}")
    rooted = [f"{BASE}.{path}" for path in paths]
    mine = (template.get("metadata") or {}).get("annotations") or {}
    theirs = spec.get("annotations") or {}
    rooted += [f"annotations.{key}" for key in sorted(theirs) if key in mine and mine[key] != theirs[key]]
    return rooted
