"""<interface> devices for tap-attached bindings (bridge, masquerade) on pod and Multus networks."""
from __future__ import annotations

from typing import Any, Final

from instancetype_webhook.domxml.conversion import Conversion
from instancetype_webhook.domxml.disks import pci_address
from instancetype_webhook.domxml.elements import Element, new, sub
from instancetype_webhook.domxml.errors import DomainError

# bridge and masquerade are attached through a pre-configured tap device ("ethernet" interfaces)
MAX_QUEUES: Final = 256


def interface_elements(conv: Conversion) -> list[Element]:
    networks = conv.networks
    elements = []
    for iface in conv.devices.get("interfaces") or []:
        if iface.get("state") == "absent":
            continue
        if iface.get("name") not in networks:
            raise DomainError(f"failed to find network {iface.get('name')}")
        if iface.get("sriov") is not None or iface.get("binding") is not None:
            continue  # SR-IOV becomes a hostdev; binding plugins (non-tap attachment) are left to their sidecars
        elements.append(_tap_interface(conv, iface))
    return elements


def _tap_interface(conv: Conversion, iface: dict[str, Any]) -> Element:
    element = new("interface", {"type": "ethernet"})
    if iface.get("pciAddress"):
        element.append(pci_address(iface["pciAddress"]))
    sub(element, "source")
    model = iface.get("model") or "virtio"
    sub(element, "model", {"type": conv.virtio_model if model == "virtio" else model})
    if iface.get("macAddress"):
        sub(element, "mac", {"address": iface["macAddress"]})
    if iface.get("bootOrder") is not None:
        sub(element, "boot", {"order": iface["bootOrder"]})
    if iface.get("state") == "down":
        sub(element, "link", {"state": "down"})
    sub(element, "alias", {"name": f"ua-{iface['name']}"})
    multiqueue = conv.devices.get("networkInterfaceMultiqueue") and model == "virtio"
    queues = min(conv.vcpus, MAX_QUEUES) if multiqueue else None
    if queues is not None or (conv.iommu and model == "virtio"):
        sub(element, "driver", {"name": "vhost", "queues": queues, "iommu": "on" if conv.iommu else None})
    if conv.arch.rom_tuning and (iface.get("bootOrder") is None or conv.iommu):
        sub(element, "rom", {"enabled": "no"})
    if iface.get("acpiIndex"):
        sub(element, "acpi", {"index": iface["acpiIndex"]})
    return element
