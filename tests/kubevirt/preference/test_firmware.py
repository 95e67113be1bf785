"""Preference firmware (spec 2.6; kubevirt.preference.firmware)."""
from __future__ import annotations

from tests.kit.kubevirt import applied


def test_firmware_section_always_creates_a_bootloader_and_deprecated_fields():
    assert applied({"firmware": {}})["spec"]["domain"]["firmware"] == {"bootloader": {}}
    fw = applied({"firmware": {"preferredUseEfi": True, "preferredUseSecureBoot": True}})["spec"]["domain"]["firmware"]
    assert fw == {"bootloader": {"efi": {"secureBoot": True}}}
    fw = applied({"firmware": {"preferredUseBios": True, "preferredUseBiosSerial": True}})["spec"]["domain"]["firmware"]
    assert fw == {"bootloader": {"bios": {"useSerial": True}}}
