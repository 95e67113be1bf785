"""<sysinfo> (domxml/sysinfo.py): the SMBIOS system, bios, baseBoard and chassis entries."""
from __future__ import annotations

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
