"""<controller> devices: usb (none or qemu-xhci), virtio-scsi, pcie-root without the 64-bit hole, virtio-serial."""
from __future__ import annotations

from app.domxml.conversion import Conversion
from app.domxml.disks import disk_kind
from app.domxml.elements import Element, new, sub
from app.domxml.iothreads import IOThreadPlan


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
        _scsi_driver(conv, scsi, iothreads, scsi_disks, iommu)
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


def _scsi_driver(conv: Conversion, scsi: Element, plan: IOThreadPlan, scsi_disks: bool, iommu: str | None) -> None:
    wants_thread = plan.enabled and plan.auto > 0 and conv.domain.get("ioThreadsPolicy") is not None and scsi_disks
    if not wants_thread:
        if iommu:
            sub(scsi, "driver", {"iommu": iommu})
        return
    vcpus = max(conv.vcpus, 1)
    threads = min(plan.auto, vcpus)
    driver = sub(scsi, "driver", {"iothread": 1 if threads == 1 else None, "queues": vcpus, "iommu": iommu})
    if threads > 1:
        pool = sub(driver, "iothreads")
        for thread_id in range(1, threads + 1):
            sub(pool, "iothread", {"id": thread_id})
