"""<sysinfo> (domxml/sysinfo.py): the SMBIOS system, bios, baseBoard and chassis entries."""
from __future__ import annotations

from instancetype_webhook.domxml import LauncherContext, SMBios
from instancetype_webhook.domxml.sysinfo import sysinfo_element
from tests.kit.domxml import FW_UUID, assert_xml, conversion, make_vmi


def test_sysinfo_uuid_serial_smbios_and_chassis():
    vmi = make_vmi({"firmware": {"uuid": FW_UUID, "serial": "S1"}, "chassis": {"asset": "A7"}})
    assert_xml(sysinfo_element(conversion(vmi)), f'<sysinfo type="smbios"><system>'
               f'<entry name="uuid">{FW_UUID}</entry><entry name="serial">S1</entry>'
               '<entry name="manufacturer">KubeVirt</entry><entry name="family">KubeVirt</entry>'
               '<entry name="product">None</entry><entry name="sku"></entry><entry name="version"></entry>'
               '</system><bios/><baseBoard/><chassis><entry name="manufacturer"></entry><entry name="version"></entry>'
               '<entry name="serial"></entry><entry name="asset">A7</entry><entry name="sku"></entry>'
               '</chassis></sysinfo>')


def test_sysinfo_without_firmware_chassis_or_smbios():
    vmi = make_vmi()
    del vmi["spec"]["domain"]["firmware"]
    conv = conversion(vmi, LauncherContext(smbios=None), defaults=False)
    assert_xml(sysinfo_element(conv), '<sysinfo type="smbios"><system/><bios/><baseBoard/><chassis/></sysinfo>')


def test_sysinfo_uses_the_contexts_smbios_strings():
    ctx = LauncherContext(smbios=SMBios(manufacturer="ACME", family="F", product="P", sku="S", version="V"))
    system = sysinfo_element(conversion(make_vmi(), ctx)).find("system")
    assert [(e.get("name"), e.text) for e in system] == [
        ("uuid", FW_UUID), ("manufacturer", "ACME"), ("family", "F"), ("product", "P"), ("sku", "S"), ("version", "V")]
