"""virt-api's VMI create defaults (ApplyNewVMIMutations) for a cluster with an empty configuration on amd64.

The converter assumes these ran; the conformance oracle applies them before converting.
"""
from __future__ import annotations

import copy

from app.domxml.quantity import parse_quantity, quantity_value

MAX_HOTPLUG_RATIO = 4
MAX_VCPUS = 512
HOTPLUG_ALIGN = 2 * 2**20
HOTPLUG_ALIGN_1G = 2**30
MIN_HOTPLUG_GUEST = 2**30
CDROM_DEFAULT_BUS = DISK_DEFAULT_BUS = "sata"
DISK_KINDS = ("disk", "cdrom", "lun")
HYPERV_DEPENDENCIES = (  # (feature, required feature), leaves first as upstream does
    ("evmcs", "vapic"), ("ipi", "vpindex"), ("tlbflush", "vpindex"), ("synictimer", "synic"), ("synic", "vpindex"),
)
TIMERS = ("hpet", "kvm", "pit", "rtc", "hyperv")


def apply_vmi_defaults(vmi: dict) -> dict:
    """A defaulted deep copy of ``vmi``."""
    vmi = copy.deepcopy(vmi)
    spec = vmi.setdefault("spec", {})
    if not spec.get("architecture"):
        spec["architecture"] = "amd64"
    domain = spec.setdefault("domain", {})
    _machine(domain)
    _resources(domain)
    _guest_memory(domain)
    _cpu_topology(domain)
    _network(spec)
    _volume_disks(spec)
    _object_defaults(domain)
    _hyperv_dependencies(domain)
    if spec["architecture"] == "amd64":
        _amd64(domain)
    cpu = domain.setdefault("cpu", {})
    if not cpu.get("model"):
        cpu["model"] = "host-model"
    if spec["architecture"] != "arm64":
        _cpu_hotplug(domain)
        _memory_hotplug(spec)
    return vmi


def _machine(domain: dict) -> None:
    machine = domain.setdefault("machine", {})
    if not machine.get("type"):
        machine["type"] = "q35"


def _resources(domain: dict) -> None:
    resources = domain.setdefault("resources", {})
    limits = resources.get("limits") or {}
    requests = resources.get("requests") or {}
    if limits.get("cpu") not in (None, 0, "0") and requests.get("cpu") in (None, 0, "0"):
        resources["requests"] = {**requests, "cpu": limits["cpu"]}


def _nonzero(value: object) -> bool:
    return value is not None and parse_quantity(value) != 0


def _guest_memory(domain: dict) -> None:
    memory = domain.get("memory") or {}
    if memory.get("guest") is not None:
        return
    resources = domain.get("resources") or {}
    requests, limits = resources.get("requests") or {}, resources.get("limits") or {}
    if _nonzero(requests.get("memory")):
        memory["guest"] = requests["memory"]
    elif _nonzero(limits.get("memory")):
        memory["guest"] = limits["memory"]
    elif memory.get("hugepages", {}).get("pageSize"):
        memory["guest"] = memory["hugepages"]["pageSize"]
    domain["memory"] = memory


def _cpu_topology(domain: dict) -> None:
    cpu = domain.get("cpu")
    if cpu and (cpu.get("cores") or cpu.get("sockets") or cpu.get("threads")):
        return
    cpu = domain.setdefault("cpu", {})
    resources = domain.get("resources") or {}
    sockets = 1
    if "cpu" in (resources.get("limits") or {}):
        sockets = quantity_value(resources["limits"]["cpu"])
    elif "cpu" in (resources.get("requests") or {}):
        sockets = quantity_value(resources["requests"]["cpu"])
    cpu.update({"sockets": sockets, "cores": 1, "threads": 1})


def _network(spec: dict) -> None:
    devices = spec["domain"].setdefault("devices", {})
    if devices.get("autoattachPodInterface") is False:
        return
    if devices.get("interfaces") or spec.get("networks"):
        return
    devices["interfaces"] = [{"name": "default", "bridge": {}}]
    spec["networks"] = [{"name": "default", "pod": {}}]


def _volume_disks(spec: dict) -> None:
    devices = spec["domain"].setdefault("devices", {})
    disks = devices.get("disks") or []
    names = {d.get("name") for d in disks}
    for volume in spec.get("volumes") or []:
        if volume.get("name") not in names:
            disks.append({"name": volume["name"]})
    if disks:
        devices["disks"] = disks


def _enable(state: dict | None) -> dict | None:
    if state is None:
        return None
    if state.get("enabled") is None:
        state["enabled"] = True
    return state


def _object_defaults(domain: dict) -> None:
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
        for name, state in hyperv.items():
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


def _hyperv_dependencies(domain: dict) -> None:
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


def _amd64(domain: dict) -> None:
    for disk in domain.get("devices", {}).get("disks") or []:
        for kind in DISK_KINDS:
            if kind in disk:
                target = disk[kind] if disk[kind] is not None else {}
                if not target.get("bus"):
                    target["bus"] = DISK_DEFAULT_BUS
                disk[kind] = target
    watchdog = domain.get("devices", {}).get("watchdog")
    if watchdog is not None:
        esb = watchdog.get("i6300esb") or {}
        if not esb.get("action"):
            esb["action"] = "reset"
        watchdog["i6300esb"] = esb


def _cpu_hotplug(domain: dict) -> None:
    cpu = domain["cpu"]
    if cpu.get("maxSockets"):
        return
    # raw values, like upstream: a topology given only as cores/threads (sockets 0) gets no CPU hotplug
    sockets, cores, threads = cpu.get("sockets") or 0, cpu.get("cores") or 0, cpu.get("threads") or 0
    max_sockets = sockets * MAX_HOTPLUG_RATIO
    if max_sockets * cores * threads > MAX_VCPUS:
        max_sockets = max(MAX_VCPUS // (cores * threads), sockets)
    if max_sockets:
        cpu["maxSockets"] = max_sockets


def _memory_hotplug(spec: dict) -> None:
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
    if guest < MIN_HOTPLUG_GUEST:
        return
    max_guest = guest * MAX_HOTPLUG_RATIO
    align = HOTPLUG_ALIGN_1G if (memory.get("hugepages") or {}).get("pageSize") == "1Gi" else HOTPLUG_ALIGN
    if guest % align or max_guest % align:
        return
    if spec.get("architecture") != "amd64":
        return
    memory["maxGuest"] = str(max_guest)
