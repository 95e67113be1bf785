"""<hostdev> for GPUs and host devices, resolved from the device plugins' environment variables."""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from instancetype_webhook.domxml.conversion import Conversion
from instancetype_webhook.domxml.disks import pci_address
from instancetype_webhook.domxml.elements import Element, new, sub
from instancetype_webhook.domxml.errors import DomainError

PCI_ADDRESS: Final = re.compile(r"^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$")


def resource_variable(prefix: str, device_name: str) -> str:
    """``nvidia.com/TU104GL_Tesla_T4`` -> ``PCI_RESOURCE_NVIDIA_COM_TU104GL_TESLA_T4``."""
    return prefix + re.sub(r"[./]", "_", device_name).upper()


class _AddressPool:
    """Device addresses per resource, handed out in order like the launcher does."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self._env = env
        self._taken: dict[str, int] = {}

    def take(self, variable: str) -> str | None:
        values = [v.strip() for v in self._env.get(variable, "").split(",") if v.strip()]
        index = self._taken.get(variable, 0)
        if index >= len(values):
            return None
        self._taken[variable] = index + 1
        return values[index]


def hostdev_elements(conv: Conversion) -> list[Element]:
    pool = _AddressPool(dict(conv.ctx.env))
    elements = []
    for device in conv.devices.get("hostDevices") or []:
        elements.append(_hostdev(pool, device, "hostdevice", "host-devices"))
    gpus = conv.devices.get("gpus") or []
    gpu_elements = [_hostdev(pool, gpu, "gpu", "GPU host-devices") for gpu in gpus]
    _vgpu_display(gpus, gpu_elements)
    return elements + gpu_elements


def _vgpu_display(gpus: list[dict[str, Any]], elements: list[Element]) -> None:
    """Mediated (vGPU) devices: display/ramfb from virtualGPUOptions, or on for the first one by default."""
    explicit = any(((g.get("virtualGPUOptions") or {}).get("display")) is not None for g in gpus)
    first_default = True
    for gpu, element in zip(gpus, elements, strict=True):
        if element.get("type") != "mdev":
            continue
        display = (gpu.get("virtualGPUOptions") or {}).get("display")
        if display is not None:
            if display.get("enabled", True) is not False:
                element.set("display", "on")
                if (display.get("ramFB") or {}).get("enabled", True) is not False:
                    element.set("ramfb", "on")
        elif not explicit and first_default:
            element.set("display", "on")
            element.set("ramfb", "on")
            first_default = False


def _hostdev(pool: _AddressPool, device: dict[str, Any], alias_prefix: str, what: str) -> Element:
    name, resource = device.get("name"), device.get("deviceName") or ""
    alias = f"ua-{alias_prefix}-{name}"
    pci = pool.take(resource_variable("PCI_RESOURCE_", resource))
    if pci is not None:
        if not PCI_ADDRESS.match(pci):
            raise DomainError(f"failed to create {what}: invalid PCI address {pci!r} for {resource}")
        element = new("hostdev", {"type": "pci", "managed": "no"})
        source = sub(element, "source")
        source.append(pci_address(pci))
        sub(element, "alias", {"name": alias})
        return element
    mdev = pool.take(resource_variable("MDEV_PCI_RESOURCE_", resource))
    if mdev is not None:
        element = new("hostdev", {"type": "mdev", "mode": "subsystem", "model": "vfio-pci"})
        source = sub(element, "source")
        sub(source, "address", {"type": "", "bus": "", "uuid": mdev})  # Go writes the empty type/bus attributes
        sub(element, "alias", {"name": alias})
        return element
    raise DomainError(f"failed to create {what}: no device of resource {resource} is allocated to the pod for {name}")
