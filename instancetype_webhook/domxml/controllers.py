"""<controller> devices: usb (none or qemu-xhci), virtio-scsi, pcie-root without the 64-bit hole, virtio-serial."""
from __future__ import annotations

from typing import Any

from instancetype_webhook.domxml.conversion import Conversion
from instancetype_webhook.domxml.disks import disk_kind
from instancetype_webhook.domxml.elements import Element, new, sub
from instancetype_webhook.domxml.iothreads import IOThreadPlan


def usb_needed(conv: Conversion) -> bool:
    if conv.arch.usb_always or conv.arch.usb_never:
        return conv.arch.usb_always
    devices = conv.devices
    if any((i.get("bus") or "usb") == "usb" for i in devices.get("inputs") or []):
        return True
    if any(disk_kind(d)[1].get("bus") == "usb" for d in devices.get("disks") or []):
        return True
    return devices.get("clientPassthrough") is not None


def controller_elements(conv: Conversion, iothreads: IOThreadPlan) -> list[Element]:
    elements = [new("controller", {"type": "usb", "index": 0, "model": "qemu-xhci" if usb_needed(conv) else "none"})]
    iommu = "on" if conv.iommu else None
    devices = conv.devices
    scsi_disks = any(disk_kind(d)[1].get("bus") == "scsi" for d in devices.get("disks") or [])
    if not devices.get("disableHotplug") or scsi_disks:
        scsi = new("controller", {"type": "scsi", "index": 0, "model": conv.arch.scsi_model or conv.virtio_model})
        _scsi_driver(conv, scsi, iothreads, iommu)
        elements.append(scsi)
    if conv.arch.pci_hole64 and conv.annotations.get("kubevirt.io/disablePCIHole64", "").lower() == "true":
        pci = new("controller", {"type": "pci", "index": 0, "model": "pcie-root"})
        sub(pci, "pcihole64", {"unit": "KiB"}, 0)
        elements.append(pci)
    if devices.get("autoattachSerialConsole") is not False:
        serial = new("controller", {"type": "virtio-serial", "index": 0, "model": conv.virtio_model})
        if iommu:
            sub(serial, "driver", {"iommu": iommu})
        elements.append(serial)
    return elements


def _scsi_driver(conv: Conversion, scsi: Element, plan: IOThreadPlan, iommu: str | None) -> None:
    """upstream's assignSCSIControllerIOThread: an iothread and queues only for a dedicated-thread SCSI disk."""
    disks = conv.devices.get("disks") or []
    dedicated_scsi = any(disk_kind(d)[1].get("bus") == "scsi" and d.get("dedicatedIOThread") for d in disks)
    if not (plan.enabled and plan.auto > 0 and dedicated_scsi):
        if iommu:
            sub(scsi, "driver", {"iommu": iommu})
        return
    sub(scsi, "driver", {"iothread": _scsi_thread(plan.auto, disks), "queues": max(conv.vcpus, 1), "iommu": iommu})


def _scsi_thread(auto: int, disks: list[dict[str, Any]]) -> int:
    """The shared-pool thread after the virtio disks' round robin (upstream's computeScsiControllerThread)."""
    thread = 1
    for disk in disks:
        if disk_kind(disk)[1].get("bus") == "virtio" and not disk.get("dedicatedIOThread"):
            thread = thread % auto + 1
    return thread
