"""virt-api's VMI create defaults: the VMI mutating webhook (`ApplyNewVMIMutations`, then `Mutate`'s CREATE
branch) as a given release and cluster configuration run it, per architecture. Plain data in and out.

The running VMI the live-update planner starts from (`start.running_vmi`) and the VMI the domain XML is
rendered from (`domxml.vmi_defaults`) are both this function's answer, so a volume hotplugged later is
appended to disks that already carry their defaults, and the domain is the one that VMI gives.

    vmi_create_defaults(vmi, settings, DefaultsConfig(...)) -> None   (in place; ExpandError when the default
                                                                       interface cannot be made)

In upstream's order:
1. `SetDefaultVirtualMachineInstanceSpec`: architecture, machine type, CPU request, guest memory, topology,
   pull policies, eviction strategy, default interface and volume disks (kubevirt.defaults);
2. s390x: ACPI off unless set;
3. the API's object defaults: disk kind, CD-ROM readOnly/tray, input bus/type, feature states enabled
   (ACPI, APIC, SMM, pvspinlock, every Hyper-V feature, synictimer.direct, tlbflush.direct/extended),
   spinlocks 4096, clock timers present, probe thresholds;
4. the Hyper-V dependencies (leaves first; the first unsatisfiable one stops them; EVMCS needs vmx);
5. per architecture: amd64 (and any other) SATA disk/CD-ROM/LUN buses and an i6300esb watchdog; arm64
   virtio buses, host-passthrough CPU, UEFI boot with secure boot off (an `efi` given without `secureBoot`
   gets `false` only from v1.8.3, change `arm64-efi-secure-boot-default-false`); s390x virtio buses and
   a diag288 watchdog; then the cluster CPU model or `host-model`;
6. status: `memory.guestAtBoot/guestCurrent/guestRequested`, `currentCPUTopology`;
7. under LiveUpdate, not on arm64: CPU and memory hotplug maxima (kubevirt.liveupdate.hotplug);
8. the webhook's annotations: `kubevirt.io/pci-topology-version: v3` on amd64/arm64 with a q35/virt machine
   type, `kubevirt.io/qgs-socket-path` on a TDX VMI (from v1.9); `status.runtimeUser: 107` unless the Root
   gate is on.

Not reproduced: the random `firmware.uuid` (and the `firmware: {}` it sits in) of a VMI created without one
(a VMI started from a VM carries the VM's), the emulator-thread parity annotation copied from the KubeVirt
CR's own annotations, VMI presets, the finalizer and the Pending phase.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from instancetype_webhook.kubevirt.configuration import ClusterSettings
from instancetype_webhook.kubevirt.defaults import set_vmi_spec_defaults
from instancetype_webhook.kubevirt.liveupdate.hotplug import default_max_guest, default_max_sockets, is_live_update
from instancetype_webhook.kubevirt.releases import ARM64_EFI_SECURE_BOOT_DEFAULT_FALSE, TDX_QGS_SOCKET_ANNOTATION

DISK_KINDS: Final = ("disk", "cdrom", "lun")
DEFAULT_DISK_BUS: Final[Mapping[str, str]] = {"arm64": "virtio", "s390x": "virtio"}  # any other architecture: sata
WATCHDOG_MODEL: Final[Mapping[str, str]] = {"s390x": "diag288"}  # any other architecture (not arm64): i6300esb
HYPERV_DEPENDENCIES: Final = (  # (feature, required feature), leaves first as upstream does
    ("evmcs", "vapic"), ("ipi", "vpindex"), ("tlbflush", "vpindex"), ("synictimer", "synic"), ("synic", "vpindex"),
)
TIMERS: Final = ("hpet", "kvm", "pit", "rtc", "hyperv")
PROBE_MINIMA: Final = (("timeoutSeconds", 1), ("periodSeconds", 10), ("successThreshold", 1), ("failureThreshold", 3))
PCI_TOPOLOGY_ANNOTATION: Final = "kubevirt.io/pci-topology-version"
QGS_SOCKET_ANNOTATION: Final = "kubevirt.io/qgs-socket-path"
DEFAULT_QGS_SOCKET_PATH: Final = "/var/run/tdx-qgs/qgs.socket"
NONROOT_USER: Final = 107


@dataclass(frozen=True)
class DefaultsConfig:
    """What the defaults read besides ClusterSettings' own fields: the merged KubeVirt configuration (for
    `vmRolloutStrategy`, `liveUpdateConfiguration`, feature gates, TDX attestation) and its `cpuModel`."""
    configuration: Mapping[str, Any]
    cpu_model: str = ""


def defaults_config(configuration: Mapping[str, Any]) -> DefaultsConfig:
    """The DefaultsConfig of a merged KubeVirt configuration."""
    return DefaultsConfig(configuration, str(configuration.get("cpuModel") or ""))


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def vmi_create_defaults(vmi: dict[str, Any], settings: ClusterSettings, config: DefaultsConfig) -> None:
    """Apply virt-api's VMI CREATE mutation to `vmi` in place (ExpandError from the default interface)."""
    spec = vmi.setdefault("spec", {})
    set_vmi_spec_defaults(spec, settings)
    domain = spec.setdefault("domain", {})
    arch = str(spec.get("architecture") or "")
    if arch == "s390x":
        _s390x_features(domain)
    _object_defaults(spec)
    _hyperv_dependencies(domain)
    _arch_defaults(domain, arch, settings)
    cpu = domain.setdefault("cpu", {})
    if not cpu.get("model"):
        cpu["model"] = config.cpu_model or "host-model"
    _status(vmi, domain)
    if arch != "arm64" and is_live_update(config.configuration):
        _hotplug(spec, config.configuration)
    _mutator(vmi, settings, config.configuration)


def _s390x_features(domain: dict[str, Any]) -> None:
    """ACPI is off by default on s390x (it has none); an explicit enabled value stays."""
    features = domain.get("features")
    if features is None:
        domain["features"] = {"acpi": {"enabled": False}}
    elif _obj(features.get("acpi")).get("enabled") is None:
        features["acpi"] = {**_obj(features.get("acpi")), "enabled": False}


def _enable(state: Any) -> None:
    if isinstance(state, dict) and state.get("enabled") is None:
        state["enabled"] = True


def _object_defaults(spec: dict[str, Any]) -> None:
    domain = spec["domain"]
    devices = domain.setdefault("devices", {})
    for disk in devices.get("disks") or []:
        if not any(k in disk for k in DISK_KINDS):
            disk["disk"] = {}
        if "cdrom" in disk:
            cdrom = _obj(disk["cdrom"])
            cdrom.setdefault("readOnly", True)
            if not cdrom.get("tray"):
                cdrom["tray"] = "closed"
            disk["cdrom"] = cdrom
    for inp in devices.get("inputs") or []:
        if not inp.get("bus"):
            inp["bus"] = "usb"
        if not inp.get("type"):
            inp["type"] = "tablet"
    features = domain.get("features")
    if features is None:
        features = domain["features"] = {}
    features["acpi"] = _obj(features.get("acpi"))
    for name in ("acpi", "apic", "smm", "pvspinlock"):
        _enable(features.get(name))
    hyperv = features.get("hyperv")
    if isinstance(hyperv, dict):
        for state in hyperv.values():
            _enable(state)
        spinlocks = hyperv.get("spinlocks")
        if isinstance(spinlocks, dict) and spinlocks.get("enabled") and spinlocks.get("spinlocks") is None:
            spinlocks["spinlocks"] = 4096
        for parent, children in (("synictimer", ("direct",)), ("tlbflush", ("direct", "extended"))):
            for child in children:
                _enable(_obj(hyperv.get(parent)).get(child))
    timer = _obj(domain.get("clock")).get("timer")
    if isinstance(timer, dict):
        for name in TIMERS:
            state = timer.get(name)
            if isinstance(state, dict) and state.get("present") is None:
                state["present"] = True
    for key in ("livenessProbe", "readinessProbe"):
        probe = spec.get(key)
        if isinstance(probe, dict):
            for field_name, minimum in PROBE_MINIMA:
                value = probe.get(field_name)
                if not isinstance(value, int) or value < 1:
                    probe[field_name] = minimum


def _hyperv_dependencies(domain: dict[str, Any]) -> None:
    hyperv = _obj(domain.get("features")).get("hyperv")
    if not isinstance(hyperv, dict):
        return

    def enabled(name: str) -> bool:
        return _obj(hyperv.get(name)).get("enabled") is True

    for feature, required in HYPERV_DEPENDENCIES:
        if not enabled(feature):
            continue
        state = hyperv.get(required)
        if not isinstance(state, dict) or state.get("enabled") is None:
            hyperv[required] = {**_obj(state), "enabled": True}
        elif not state["enabled"]:
            return  # upstream stops at the first unsatisfiable dependency; the webhook rejects later
    evmcs = hyperv.get("evmcs")
    if isinstance(evmcs, dict) and evmcs.get("enabled") in (None, True):
        cpu = domain.setdefault("cpu", {})
        features = cpu.setdefault("features", [])
        for feature in features:
            if feature.get("name") == "vmx":
                feature["policy"] = "require"
                break
        else:
            features.append({"name": "vmx", "policy": "require"})


def _arch_defaults(domain: dict[str, Any], arch: str, settings: ClusterSettings) -> None:
    devices = _obj(domain.get("devices"))
    bus = DEFAULT_DISK_BUS.get(arch, "sata")
    for disk in devices.get("disks") or []:
        for kind in DISK_KINDS:
            if kind in disk:
                target = _obj(disk[kind])
                if not target.get("bus"):
                    target["bus"] = bus
                disk[kind] = target
    if arch == "arm64":
        _arm64_defaults(domain, settings)
    elif devices.get("watchdog") is not None:
        model = WATCHDOG_MODEL.get(arch, "i6300esb")
        watchdog = devices["watchdog"]
        device = _obj(watchdog.get(model))
        if not device.get("action"):
            device["action"] = "reset"
        watchdog[model] = device


def _arm64_defaults(domain: dict[str, Any], settings: ClusterSettings) -> None:
    cpu = domain.setdefault("cpu", {})
    if not cpu.get("model"):
        cpu["model"] = "host-passthrough"
    firmware = domain.get("firmware")
    if firmware is None:
        firmware = domain["firmware"] = {}
    if firmware.get("bootloader") is None:
        firmware["bootloader"] = {"efi": {"secureBoot": False}}
    efi = firmware["bootloader"].get("efi")
    # before v1.8.3 only the EFI the defaults create gets secureBoot false; an `efi: {}` given stays unset
    # (secure boot, which arm64 refuses)
    given_efi_defaults = settings.release.has(ARM64_EFI_SECURE_BOOT_DEFAULT_FALSE)
    if given_efi_defaults and isinstance(efi, dict) and efi.get("secureBoot") is None:
        efi["secureBoot"] = False


def _status(vmi: dict[str, Any], domain: dict[str, Any]) -> None:
    """setGuestMemoryStatus (always, when guest is set) and setCurrentCPUTopologyStatus (when unset).

    The topology is the spec's sockets, cores and threads as the API serialises a `CPUTopology` (every field
    `omitempty`, the same in every release): a zero count is left out, not written as 0."""
    status = vmi.setdefault("status", {})
    guest = _obj(domain.get("memory")).get("guest")
    if guest is not None:
        status["memory"] = {"guestAtBoot": guest, "guestCurrent": guest, "guestRequested": guest}
    cpu = _obj(domain.get("cpu"))
    if status.get("currentCPUTopology") is None:
        counts = ((key, int(cpu.get(key) or 0)) for key in ("sockets", "cores", "threads"))
        status["currentCPUTopology"] = {key: count for key, count in counts if count}


def _hotplug(spec: dict[str, Any], configuration: Mapping[str, Any]) -> None:
    domain = spec["domain"]
    cpu = domain["cpu"]
    max_sockets = default_max_sockets(cpu, configuration)
    if max_sockets:
        cpu["maxSockets"] = max_sockets
    max_guest = default_max_guest(spec, configuration)
    if max_guest is not None:
        domain.setdefault("memory", {})["maxGuest"] = max_guest


def supports_pcie_hotplug(spec: Mapping[str, Any]) -> bool:
    """SupportsPCIeHotplug: amd64/arm64 (or unset) with a q35 or virt machine type (or none)."""
    if spec.get("architecture") not in ("amd64", "arm64", "", None):
        return False
    machine = _obj(_obj(spec.get("domain")).get("machine"))
    if not machine:
        return True
    machine_type = str(machine.get("type") or "")
    return "q35" in machine_type or machine_type.startswith("virt")


def _qgs_socket_path(configuration: Mapping[str, Any]) -> str:
    attestation = _obj(_obj(_obj(configuration.get("confidentialCompute")).get("tdx")).get("attestation"))
    path = attestation.get("qgsSocketPath")
    return str(path) if path is not None else DEFAULT_QGS_SOCKET_PATH


def _mutator(vmi: dict[str, Any], settings: ClusterSettings, configuration: Mapping[str, Any]) -> None:
    spec = vmi["spec"]
    metadata = vmi.get("metadata")
    if not isinstance(metadata, dict):
        metadata = vmi["metadata"] = {}
    annotations: dict[str, Any] = _obj(metadata.get("annotations"))
    if supports_pcie_hotplug(spec) and PCI_TOPOLOGY_ANNOTATION not in annotations:
        annotations[PCI_TOPOLOGY_ANNOTATION] = "v3"
    tdx = _obj(_obj(spec.get("domain")).get("launchSecurity")).get("tdx") is not None
    if tdx and settings.release.has(TDX_QGS_SOCKET_ANNOTATION):
        path = _qgs_socket_path(configuration)
        if path:
            annotations[QGS_SOCKET_ANNOTATION] = path
    if annotations:
        metadata["annotations"] = annotations
    if not settings.release.gate_enabled("Root", configuration):
        vmi.setdefault("status", {})["runtimeUser"] = NONROOT_USER


__all__ = ["DefaultsConfig", "defaults_config", "supports_pcie_hotplug", "vmi_create_defaults"]
