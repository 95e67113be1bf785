"""<disk> devices: target names, drivers, and the launcher-pod paths of every volume type."""
from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Any, Final

from instancetype_webhook.domxml.conversion import Conversion
from instancetype_webhook.domxml.elements import Element, new, sub
from instancetype_webhook.domxml.errors import DomainError
from instancetype_webhook.domxml.iothreads import IOThreadPlan

EPHEMERAL_DIR: Final = "/var/run/kubevirt-ephemeral-disks/disk-data"
CONTAINER_DISK_DIR: Final = "/var/run/kubevirt/container-disks"
PVC_DIR: Final = "/var/run/kubevirt-private/vmi-disks"
CLOUD_INIT_DIR: Final = "/var/run/kubevirt-ephemeral-disks/cloud-init-data"
EMPTY_DISK_DIR: Final = "/var/run/libvirt/empty-disks"
CONFIG_DIRS: Final = {"configMap": "/var/run/kubevirt-private/config-map-disks",
                      "secret": "/var/run/kubevirt-private/secret-disks",
                      "downwardAPI": "/var/run/kubevirt-private/downwardapi-disks",
                      "sysprep": "/var/run/kubevirt-private/sysprep-disks"}
SERVICE_ACCOUNT_ISO: Final = "/var/run/kubevirt-private/service-account-disk/service-account.iso"
DOWNWARD_METRICS_DISK: Final = "/var/run/kubevirt-private/downwardapi-disks/vhostmd0"
PR_HELPER_SOCKET: Final = "/var/run/kubevirt/daemons/pr/pr-helper.sock"
ERROR_POLICIES: Final = ("stop", "ignore", "report", "enospace")
PREFIXES: Final = {"virtio": "vd", "sata": "sd", "scsi": "sd", "usb": "sd"}


@dataclass
class Source:
    """How a volume appears to libvirt."""
    disk_type: str  # file | block
    driver_type: str  # raw | qcow2
    attrs: dict[str, Any]
    backing: tuple[str, str] | None = None  # (format, file) of a qcow2 overlay's backing file
    discard: bool = False  # the volume type itself asks for discard="unmap" (whatever the device kind)
    metrics: bool = False  # the downward-metrics disk: a fixed read-only virtio driver


def letters(index: int) -> str:
    """0 -> a, 25 -> z, 26 -> aa: the suffix of a disk target name."""
    name = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        name = chr(ord("a") + rest) + name
    return name


def disk_kind(disk: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    for kind in ("disk", "lun", "cdrom"):
        if disk.get(kind) is not None:
            return kind, disk[kind]
    return "disk", {}


def target_names(conv: Conversion) -> dict[str, tuple[str, int]]:
    """Disk name -> (target dev, index within its prefix); names recorded in the VMI status are kept."""
    recorded = {s.get("name"): s.get("target") for s in (conv.vmi.get("status") or {}).get("volumeStatus") or []
                if s.get("target")}
    used: dict[str, set[str]] = {prefix: set() for prefix in set(PREFIXES.values())}
    for target in recorded.values():
        for prefix in used:
            if target.startswith(prefix):
                used[prefix].add(target)
    names = {}
    for disk in conv.devices.get("disks") or []:
        _, device = disk_kind(disk)
        prefix = PREFIXES.get(device.get("bus") or "", "sd")
        if disk["name"] in recorded:
            target = recorded[disk["name"]]
            names[disk["name"]] = (target, _index(target[len(prefix):]))
            continue
        index = 0
        while prefix + letters(index) in used[prefix]:
            index += 1
        used[prefix].add(prefix + letters(index))
        names[disk["name"]] = (prefix + letters(index), index)
    return names


def _index(suffix: str) -> int:
    value = 0
    for char in suffix:
        value = value * 26 + (ord(char) - ord("a") + 1)
    return value - 1


def volume_source(conv: Conversion, volume: dict[str, Any], index: int) -> Source:
    name = volume["name"]
    ctx = conv.ctx
    overlay_file = f"{EPHEMERAL_DIR}/{name}/disk.qcow2"
    if volume.get("containerDisk") is not None:
        fmt = ctx.container_disk_formats.get(name, ctx.container_disk_format)
        return Source("file", "qcow2", {"file": overlay_file}, (fmt, f"{CONTAINER_DISK_DIR}/disk_{index}.img"),
                      discard=True)
    if volume.get("cloudInitNoCloud") is not None or volume.get("cloudInitConfigDrive") is not None:
        iso = "noCloud.iso" if volume.get("cloudInitNoCloud") is not None else "configdrive.iso"
        return Source("file", "raw", {"file": f"{CLOUD_INIT_DIR}/{conv.namespace}/{conv.name}/{iso}"})
    if volume.get("sysprep") is not None:
        return Source("file", "raw", {"file": f"{CONFIG_DIRS['sysprep']}/{name}.iso"})
    if volume.get("hostDisk") is not None:
        base = posixpath.basename(volume["hostDisk"].get("path") or "disk.img") or "disk.img"
        return Source("file", "raw", {"file": f"{PVC_DIR}/{name}/{base}"})
    for key, blocks in (("persistentVolumeClaim", ctx.block_pvcs), ("dataVolume", ctx.block_dvs)):
        if volume.get(key) is not None:
            discard = name not in ctx.volumes_discard_ignore
            if name in blocks:
                return Source("block", "raw", {"dev": f"/dev/{name}", "name": name}, discard=discard)
            return Source("file", "raw", {"file": f"{PVC_DIR}/{name}/disk.img"}, discard=discard)
    if volume.get("ephemeral") is not None:
        backing = f"/dev/{name}" if name in ctx.block_pvcs else f"{PVC_DIR}/{name}/disk.img"
        return Source("file", "qcow2", {"file": overlay_file}, ("raw", backing), discard=True)
    if volume.get("emptyDisk") is not None:
        return Source("file", "qcow2", {"file": f"{EMPTY_DISK_DIR}/{name}.qcow2"}, discard=True)
    for key in ("configMap", "secret", "downwardAPI"):
        if volume.get(key) is not None:
            return Source("file", "raw", {"file": f"{CONFIG_DIRS[key]}/{name}.iso"})
    if volume.get("serviceAccount") is not None:
        return Source("file", "raw", {"file": SERVICE_ACCOUNT_ISO})
    if volume.get("downwardMetrics") is not None:
        return Source("file", "raw", {"file": DOWNWARD_METRICS_DISK}, metrics=True)
    raise DomainError(f"disk {name} references an unsupported source")


def disk_elements(conv: Conversion, iothreads: IOThreadPlan) -> list[Element]:
    names = target_names(conv)
    volumes = conv.volumes
    queues = conv.vcpus if conv.devices.get("blockMultiQueue") else None
    elements = []
    for disk in conv.devices.get("disks") or []:
        elements.append(_disk(conv, disk, names[disk["name"]], volumes.get(disk["name"]), queues, iothreads))
    return elements


def _disk(conv: Conversion, disk: dict[str, Any], target: tuple[str, int], volume: tuple[int, dict[str, Any]] | None,
          queues: int | None, iothreads: IOThreadPlan) -> Element:
    kind, device = disk_kind(disk)
    bus = device.get("bus") or ""
    if volume is None:
        if kind != "cdrom":
            raise DomainError(f"no matching volume with name {disk['name']} found")
        source = Source("block", "raw", {})
    else:
        source = volume_source(conv, volume[1], volume[0])
    element = new("disk", {"device": kind, "type": source.disk_type})
    if (kind == "disk" and bus == "virtio") or source.metrics:
        element.set("model", conv.virtio_model)
    source_el = sub(element, "source", source.attrs)
    if kind == "lun" and device.get("reservation"):
        reservations = sub(source_el, "reservations", {"managed": "no"})
        sub(reservations, "source", {"type": "unix", "path": PR_HELPER_SOCKET, "mode": "client"})
    sub(element, "target", {"bus": bus or None, "dev": target[0],
                            "tray": device.get("tray") if kind == "cdrom" else None})
    if disk.get("serial") and kind == "disk":
        sub(element, "serial", text=disk["serial"])
    _driver(conv, element, disk, kind, bus, source, queues, iothreads)
    if _read_only(kind, device, source):
        sub(element, "readonly")
    sub(element, "alias", {"name": f"ua-{disk['name']}"})
    if source.backing is not None:
        backing = sub(element, "backingStore", {"type": "file"})
        sub(backing, "format", {"type": source.backing[0]})
        sub(backing, "source", {"file": source.backing[1]})
    if disk.get("bootOrder") is not None:
        sub(element, "boot", {"order": disk["bootOrder"]})
    _address(element, kind, bus, device, target[1], disk["name"])
    _blockio(element, disk, source, conv.architecture)
    if kind == "disk" and disk.get("shareable"):
        sub(element, "shareable")
    return element


def _read_only(kind: str, device: dict[str, Any], source: Source) -> bool:
    if kind == "cdrom":
        return device.get("readOnly", True) is not False
    return bool(device.get("readOnly")) or source.metrics


def _driver(conv: Conversion, element: Element, disk: dict[str, Any], kind: str, bus: str, source: Source,
            queues: int | None, iothreads: IOThreadPlan) -> None:
    policy = disk.get("errorPolicy") or "stop"
    if policy not in ERROR_POLICIES:
        raise DomainError(f"error policy {policy} not recognized")
    cache = disk.get("cache")
    if kind == "disk" and disk.get("shareable"):
        cache = cache or "none"
        if cache != "none":
            raise DomainError(f"a sharable disk requires cache = none got: {cache}")
    ignored = disk["name"] in conv.ctx.volumes_discard_ignore
    wants_discard = (kind in ("disk", "lun") and not ignored) or source.discard or not source.attrs
    discard = "unmap" if wants_discard else None
    if source.metrics:  # the converter replaces the whole driver for this disk
        cache, discard = None, None
        disk = {**disk, "io": None}
    thread = iothreads.thread_for(disk, bus)
    driver = sub(element, "driver", {
        "cache": cache or None, "error_policy": policy, "io": disk.get("io") or None, "name": "qemu",
        "type": source.driver_type, "iothread": thread, "queues": queues if bus == "virtio" else None,
        "discard": discard, "iommu": "on" if conv.iommu and bus == "virtio" else None,
    })
    pool = iothreads.pool_for(bus)
    if pool:
        threads = sub(driver, "iothreads")
        for thread_id in pool:
            sub(threads, "iothread", {"id": thread_id})


def _address(element: Element, kind: str, bus: str, device: dict[str, Any], unit: int, name: str) -> None:
    if bus == "scsi" and kind in ("disk", "lun"):
        sub(element, "address", {"type": "drive", "bus": 0, "controller": 0, "unit": unit})
    pci = device.get("pciAddress") if kind == "disk" else None
    if pci:
        if bus != "virtio":
            raise DomainError(f"setting a pci address is not allowed for non-virtio bus types, for disk {name}")
        for old in element.findall("address"):
            element.remove(old)
        element.append(pci_address(pci))


def pci_address(text: str) -> Element:
    """``0000:81:01.0`` -> ``<address type="pci" domain="0x0000" bus="0x81" slot="0x01" function="0x0">``."""
    try:
        domain, bus, rest = text.split(":")
        slot, function = rest.split(".")
        int(domain, 16), int(bus, 16), int(slot, 16), int(function, 16)
    except ValueError as exc:
        raise DomainError(f"invalid PCI address {text!r}") from exc
    return new("address", {"type": "pci", "domain": f"0x{domain}", "bus": f"0x{bus}", "slot": f"0x{slot}",
                           "function": f"0x{function}"})


MAX_CUSTOM_BLOCK_SIZE_S390X: Final = 4096


def _blockio(element: Element, disk: dict[str, Any], source: Source, architecture: str) -> None:
    block_size = disk.get("blockSize") or {}
    custom = block_size.get("custom")
    if custom and architecture == "s390x":
        logical, physical = int(custom.get("logical") or 0), int(custom.get("physical") or 0)
        if max(logical, physical) > MAX_CUSTOM_BLOCK_SIZE_S390X:
            raise DomainError(f"custom block size (logical={logical}, physical={physical}) exceeds the maximum "
                              f"supported size of {MAX_CUSTOM_BLOCK_SIZE_S390X} for architecture {architecture}")
    match = block_size.get("matchVolume")
    if not custom and match is not None and match.get("enabled", True) is not False:
        # upstream probes the volume inside the launcher pod; with no such file here it fails like the oracle
        path = source.attrs.get("file") or source.attrs.get("dev") or ""
        reason = f"failed to stat file {path}: no such file or directory" if path else \
            "disk is neither a block device nor a file"
        raise DomainError(f"failed to configure disk with block size detection enabled: {reason}")
    if custom:
        sub(element, "blockio", {"logical_block_size": custom.get("logical") or None,
                                 "physical_block_size": custom.get("physical") or None,
                                 "discard_granularity": custom.get("discardGranularity")})
