"""<sysinfo type="smbios">: firmware UUID/serial, the cluster's SMBIOS strings, chassis."""
from __future__ import annotations

from typing import Final

from instancetype_webhook.domxml.conversion import Conversion
from instancetype_webhook.domxml.elements import Element, new, sub

CHASSIS_FIELDS: Final = ("manufacturer", "version", "serial", "asset", "sku")


def sysinfo_element(conv: Conversion) -> Element:
    sysinfo = new("sysinfo", {"type": "smbios"})
    system = sub(sysinfo, "system")
    firmware = conv.firmware
    if conv.domain.get("firmware") is not None:
        sub(system, "entry", {"name": "uuid"}, firmware.get("uuid") or "")
    if firmware.get("serial"):
        sub(system, "entry", {"name": "serial"}, firmware["serial"])
    smbios = conv.ctx.smbios
    if smbios is not None:
        for name in ("manufacturer", "family", "product", "sku", "version"):
            sub(system, "entry", {"name": name}, getattr(smbios, name))
    sub(sysinfo, "bios")
    sub(sysinfo, "baseBoard")
    chassis = sub(sysinfo, "chassis")
    if conv.domain.get("chassis") is not None:
        for name in CHASSIS_FIELDS:
            sub(chassis, "entry", {"name": name}, conv.domain["chassis"].get(name) or "")
    return sysinfo
