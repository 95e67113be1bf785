"""<sysinfo type="smbios">: firmware UUID/serial, the cluster's SMBIOS strings, chassis."""
from __future__ import annotations

from app.domxml.conversion import Conversion
from app.domxml.elements import Element, new, sub

CHASSIS_FIELDS = ("manufacturer", "version", "serial", "asset", "sku")


def sysinfo_element(conv: Conversion) -> Element:
    sysinfo = new("sysinfo", {"type": "smbios"})
    system = sub(sysinfo, "system")
    firmware = conv.firmware
    if firmware.get("uuid"):
        sub(system, "entry", {"name": "uuid"}, firmware["uuid"])
    if firmware.get("serial"):
        sub(system, "entry", {"name": "serial"}, firmware["serial"])
    smbios = conv.ctx.smbios
    if smbios is not None:
        for name in ("manufacturer", "family", "product", "sku", "version"):
            sub(system, "entry", {"name": name}, getattr(smbios, name))
    sub(sysinfo, "bios")
    sub(sysinfo, "baseBoard")
    chassis = sub(sysinfo, "chassis")
    for name in CHASSIS_FIELDS:
        value = (conv.domain.get("chassis") or {}).get(name)
        if value:
            sub(chassis, "entry", {"name": name}, value)
    return sysinfo
