"""virt-api's VMI create defaults (ApplyNewVMIMutations / SetDefaultVirtualMachineInstance) under a cluster
configuration (instancetype_webhook/domxml/cluster.py; default: an empty configuration on amd64).

The converter assumes these ran; the conformance oracle applies them before converting. Per architecture:
amd64 (and anything else) defaults disks to SATA and the watchdog to i6300esb; arm64 to virtio disks, UEFI
without secure boot and host-passthrough CPUs, with no CPU or memory hotplug; s390x to virtio disks, ACPI
off and a diag288 watchdog.
"""
from __future__ import annotations

import copy
from typing import Any

from instancetype_webhook.domxml.cluster import DEFAULT_DOMAIN_CONFIG, DomainConfig
from instancetype_webhook.domxml.errors import DomainError
from instancetype_webhook.domxml.quantity import parse_quantity
from instancetype_webhook.kubevirt.causes import ExpandError
from instancetype_webhook.kubevirt.defaults import set_vmi_spec_defaults

MAX_VCPUS = 512
HOTPLUG_ALIGN = 2 * 2**20
HOTPLUG_ALIGN_1G = 2**30
MIN_HOTPLUG_GUEST = 2**30
DISK_KINDS = ("disk", "cdrom", "lun")
DEFAULT_DISK_BUS = {"arm64": "virtio", "s390x": "virtio"}  # any other architecture: sata
HYPERV_DEPENDENCIES = (  # (feature, required feature), leaves first as upstream does
    ("evmcs", "vapic"), ("ipi", "vpindex"), ("tlbflush", "vpindex"), ("synictimer", "synic"), ("synic", "vpindex"),
)
TIMERS = ("hpet", "kvm", "pit", "rtc", "hyperv")


def apply_vmi_defaults(vmi: dict[str, Any], config: DomainConfig = DEFAULT_DOMAIN_CONFIG) -> dict[str, Any]:
    """A defaulted deep copy of ``vmi``."""
    vmi = copy.deepcopy(vmi)
    spec = vmi.setdefault("spec", {})
    spec.setdefault("domain", {})
    try:
        set_vmi_spec_defaults(spec, config.settings)
    except ExpandError as exc:  # the default interface cannot be made under this configuration
        raise DomainError(exc.message) from exc
    domain = spec["domain"]
    arch = spec.get("architecture") or ""
    if arch == "s390x":
        _s390x_features(domain)
    _object_defaults(domain)
    _hyperv_dependencies(domain)
    _arch_defaults(domain, arch)
    cpu = domain.setdefault("cpu", {})
    if not cpu.get("model"):
        cpu["model"] = config.cpu_model or "host-model"
    if arch != "arm64" and config.live_update:
        _cpu_hotplug(domain, config)
        _memory_hotplug(spec, config)
    return vmi


def _s390x_features(domain: dict[str, Any]) -> None:
    """ACPI is off by default on s390x (it has none); an explicit enabled value stays."""
    features = domain.get("features")
    if features is None:
        domain["features"] = {"acpi": {"enabled": False}}
    elif (features.get("acpi") or {}).get("enabled") is None:
        features["acpi"] = {**(features.get("acpi") or {}), "enabled": False}


def _enable(state: dict[str, Any] | None) -> dict[str, Any] | None:
    if state is None:
        return None
    if state.get("enabled") is None:
        state["enabled"] = True
    return state


def _object_defaults(domain: dict[str, Any]) -> None:
    devices = domain.setdefault("devices", {})
    for disk in devices.get("disks") or []:
        if not any(k in disk for k in DISK_KINDS):
            disk["disk"] = {}
        if "cdrom" in disk:
            cdrom = disk["cdrom"] if disk["cdrom"] is not None else {}
            cdrom.setdefault("readOnly", True)
            cdrom.setdefault("tray", "closed")
            disk["cdrom"] = cdrom
    for inp in devices.get("inputs") or []:
        if not inp.get("bus"):
            inp["bus"] = "usb"
        if not inp.get("type"):
            inp["type"] = "tablet"
    features = domain.get("features")
    if features is None:
        features = domain["features"] = {}
    features["acpi"] = _enable(features.get("acpi") if features.get("acpi") is not None else {})
    for name in ("apic", "smm", "pvspinlock"):
        _enable(features.get(name))
    hyperv = features.get("hyperv")
    if hyperv is not None:
        for state in hyperv.values():
            if isinstance(state, dict):
                _enable(state)
        spinlocks = hyperv.get("spinlocks")
        if spinlocks is not None and spinlocks.get("enabled") and spinlocks.get("spinlocks") is None:
            hyperv["spinlocks"]["spinlocks"] = 4096
        if isinstance(hyperv.get("synictimer"), dict) and hyperv["synictimer"].get("direct") is not None:
            _enable(hyperv["synictimer"]["direct"])
    timer = (domain.get("clock") or {}).get("timer")
    if timer:
        for name in TIMERS:
            state = timer.get(name)
            if state is not None and state.get("present") is None:
                state["present"] = True


def _hyperv_dependencies(domain: dict[str, Any]) -> None:
    hyperv = (domain.get("features") or {}).get("hyperv")
    if hyperv is None:
        return

    def enabled(name: str) -> bool:
        state = hyperv.get(name)
        return isinstance(state, dict) and state.get("enabled") is True

    for feature, required in HYPERV_DEPENDENCIES:
        if not enabled(feature):
            continue
        state = hyperv.get(required)
        if state is None or state.get("enabled") is None:
            hyperv[required] = {**(state or {}), "enabled": True}
        elif not state["enabled"]:
            return  # upstream stops at the first unsatisfiable dependency; the webhook rejects later
    evmcs = hyperv.get("evmcs")
    if evmcs is not None and evmcs.get("enabled") in (None, True):
        cpu = domain.setdefault("cpu", {})
        features = cpu.setdefault("features", [])
        for feature in features:
            if feature.get("name") == "vmx":
                feature["policy"] = "require"
                break
        else:
            features.append({"name": "vmx", "policy": "require"})


def _arch_defaults(domain: dict[str, Any], arch: str) -> None:
    devices = domain.get("devices") or {}
    bus = DEFAULT_DISK_BUS.get(arch, "sata")
    for disk in devices.get("disks") or []:
        for kind in DISK_KINDS:
            if kind in disk:
                target = disk[kind] if disk[kind] is not None else {}
                if not target.get("bus"):
                    target["bus"] = bus
                disk[kind] = target
    if arch == "arm64":
        _arm64_defaults(domain)
    elif devices.get("watchdog") is not None:
        model = "diag288" if arch == "s390x" else "i6300esb"
        watchdog = devices["watchdog"]
        device = watchdog.get(model) or {}
        if not device.get("action"):
            device["action"] = "reset"
        watchdog[model] = device


def _arm64_defaults(domain: dict[str, Any]) -> None:
    cpu = domain.setdefault("cpu", {})
    if not cpu.get("model"):
        cpu["model"] = "host-passthrough"
    firmware = domain.get("firmware")
    if firmware is None:
        firmware = domain["firmware"] = {}
    if firmware.get("bootloader") is None:
        firmware["bootloader"] = {"efi": {}}
    efi = firmware["bootloader"].get("efi")
    if efi is not None and efi.get("secureBoot") is None:
        efi["secureBoot"] = False


def _cpu_hotplug(domain: dict[str, Any], config: DomainConfig) -> None:
    cpu = domain["cpu"]
    if cpu.get("maxSockets"):
        return
    # raw values, like upstream: a topology given only as cores/threads (sockets 0) gets no CPU hotplug
    sockets, cores, threads = cpu.get("sockets") or 0, cpu.get("cores") or 0, cpu.get("threads") or 0
    max_sockets = config.max_cpu_sockets
    if max_sockets and sockets > max_sockets:
        max_sockets = sockets
    if not max_sockets:
        max_sockets = sockets * config.max_hotplug_ratio
        if max_sockets * cores * threads > MAX_VCPUS:
            max_sockets = max(MAX_VCPUS // (cores * threads), sockets)
    if max_sockets:
        cpu["maxSockets"] = max_sockets


def _memory_hotplug(spec: dict[str, Any], config: DomainConfig) -> None:
    domain = spec["domain"]
    memory = domain.get("memory") or {}
    if memory.get("maxGuest") is not None or memory.get("guest") is None:
        return
    cpu = domain.get("cpu") or {}
    if cpu.get("realtime") is not None:
        return
    if (cpu.get("numa") or {}).get("guestMappingPassthrough") is not None:
        return
    if domain.get("launchSecurity") is not None:
        return
    guest = int(parse_quantity(memory["guest"]))
    if config.max_guest is not None:
        max_guest, max_text = int(parse_quantity(config.max_guest)), config.max_guest
    else:
        max_guest = guest * config.max_hotplug_ratio
        max_text = str(max_guest)
    if guest > max_guest:
        return
    align = HOTPLUG_ALIGN_1G if (memory.get("hugepages") or {}).get("pageSize") == "1Gi" else HOTPLUG_ALIGN
    if guest % align or max_guest % align:
        return
    if spec.get("architecture") != "amd64" or guest < MIN_HOTPLUG_GUEST:
        return
    memory["maxGuest"] = max_text
