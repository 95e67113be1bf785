"""The expand-vm-spec defaults (upstream `pkg/defaults` SetDefaultVirtualMachineInstanceSpec,
`SetDefaultVolumeDisk`, `SetDefaultNetworkInterface`), driven by ClusterSettings.

All functions take a VMI spec (`spec.template.spec`) dict and mutate it in place:
- set_default_volume_disks: a `{name}` disk for every volume without a disk or filesystem;
- set_default_network_interface: default pod network + interface with the cluster binding when the
  VM has neither networks nor interfaces and autoattachPodInterface is not false;
- set_vmi_spec_defaults: architecture, machine type, CPU requests, guest memory, topology,
  containerDisk imagePullPolicy, evictionStrategy, then the two above again.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Final

from instancetype_webhook.kubevirt.causes import ExpandError
from instancetype_webhook.kubevirt.configuration import ClusterSettings
from instancetype_webhook.kubevirt.quantity import QuantityError, parse

UPSTREAM_DEFAULT_CPU_REQUEST: Final = "100m"


def _devices(spec: dict[str, Any]) -> dict[str, Any]:
    domain = spec.setdefault("domain", {})
    devices = domain.get("devices")
    if isinstance(devices, dict):
        return devices
    fresh: dict[str, Any] = {}
    domain["devices"] = fresh
    return fresh


def set_default_volume_disks(spec: dict[str, Any]) -> None:
    volumes = spec.get("volumes") or []
    if not volumes:
        return
    devices = _devices(spec)
    names = {d.get("name") for d in devices.get("disks") or []}
    names.update(f.get("name") for f in devices.get("filesystems") or [])
    missing = [{"name": v.get("name", "")} for v in volumes if v.get("name") not in names]
    if missing:
        devices["disks"] = [*(devices.get("disks") or []), *missing]


def set_default_network_interface(spec: dict[str, Any], settings: ClusterSettings) -> None:
    devices = (spec.get("domain") or {}).get("devices") or {}
    if devices.get("autoattachPodInterface") is False:
        return
    if spec.get("networks") or devices.get("interfaces"):
        return
    binding = settings.default_network_binding
    if binding == "bridge":
        if not settings.permit_bridge_on_pod_network:
            raise ExpandError("badRequest", "bridge interface is not enabled in kubevirt-config")
        _devices(spec)["interfaces"] = [{"name": "default", "bridge": {}}]
    elif binding == "masquerade":
        _devices(spec)["interfaces"] = [{"name": "default", "masquerade": {}}]
    elif binding == "slirp":
        raise ExpandError("badRequest", "slirp interface is deprecated as of v1.3")
    spec["networks"] = [{"name": "default", "pod": {}}]


def set_vmi_spec_defaults(spec: dict[str, Any], settings: ClusterSettings) -> None:
    if not spec.get("architecture"):
        spec["architecture"] = settings.architecture
    domain = spec.setdefault("domain", {})
    machine = domain.get("machine")
    if not machine or not machine.get("type"):
        domain["machine"] = {**(machine or {}), "type": settings.machine_type_for(spec["architecture"])}
    _set_resource_requests(domain, settings)
    _set_guest_memory(domain)
    _set_guest_cpu_topology(domain)
    _set_pull_policies(spec.get("volumes") or [])
    if spec.get("evictionStrategy") is None and settings.eviction_strategy is not None:
        spec["evictionStrategy"] = settings.eviction_strategy
    set_default_network_interface(spec, settings)
    set_default_volume_disks(spec)


def _value(raw: Any) -> Any:
    try:
        return parse(raw)
    except QuantityError:
        return None


def _is_zero(raw: Any) -> bool:
    q = _value(raw) if raw is not None else None
    return q is None or q.is_zero()


@lru_cache(maxsize=64)
def _custom_cpu_request(cpu_request: str) -> bool:
    """The cluster's CPU request differs from upstream's default (a settings value: decided once)."""
    return not parse(cpu_request).equals(parse(UPSTREAM_DEFAULT_CPU_REQUEST))


def _set_resource_requests(domain: dict[str, Any], settings: ClusterSettings) -> None:
    resources = domain.get("resources") or {}
    requests = resources.get("requests") or {}
    limits = resources.get("limits") or {}
    changed = False
    if not _is_zero(limits.get("cpu")) and _is_zero(requests.get("cpu")):
        requests = {**requests, "cpu": limits["cpu"]}
        changed = True
    if (_custom_cpu_request(settings.cpu_request) and "cpu" not in requests
            and not (domain.get("cpu") or {}).get("dedicatedCpuPlacement")):
        requests = {**requests, "cpu": settings.cpu_request}
        changed = True
    if changed:
        domain["resources"] = {**resources, "requests": requests}


def _set_guest_memory(domain: dict[str, Any]) -> None:
    memory = domain.get("memory")
    if memory and memory.get("guest") is not None:
        return
    memory = dict(memory or {})
    resources = domain.get("resources") or {}
    requested = (resources.get("requests") or {}).get("memory")
    limited = (resources.get("limits") or {}).get("memory")
    if not _is_zero(requested):
        memory["guest"] = requested
    elif not _is_zero(limited):
        memory["guest"] = limited
    elif memory.get("hugepages") is not None:
        page = _value((memory["hugepages"] or {}).get("pageSize", ""))
        if page is not None:
            memory["guest"] = str(page)
    domain["memory"] = memory


def _set_guest_cpu_topology(domain: dict[str, Any]) -> None:
    cpu = domain.get("cpu")
    if cpu and (cpu.get("cores") or cpu.get("sockets") or cpu.get("threads")):
        return
    resources = domain.get("resources") or {}
    sockets = 1
    for group in ("limits", "requests"):
        amount = (resources.get(group) or {}).get("cpu")
        if amount is not None:
            q = _value(amount)
            sockets = (q.int_value() if q is not None else 0) & 0xFFFFFFFF
            break
    domain["cpu"] = {**(cpu or {}), "sockets": sockets, "cores": 1, "threads": 1}


def _set_pull_policies(volumes: Any) -> None:  # spec.volumes as decoded: a list when well-formed
    for volume in volumes:
        disk = volume.get("containerDisk")
        if disk is not None and not disk.get("imagePullPolicy"):
            image = disk.get("image") or ""
            latest = image.endswith(":latest") or not any(c in image for c in ":@")
            disk["imagePullPolicy"] = "Always" if latest else "IfNotPresent"
