"""Preference firmware (spec 2.6; kubevirt.preference.firmware)."""
from __future__ import annotations

from instancetype_webhook.kubevirt.preference.firmware import apply_firmware_preferences
from tests.kit.kubevirt import applied


def test_firmware_section_always_creates_a_bootloader_and_deprecated_fields():
    assert applied({"firmware": {}})["spec"]["domain"]["firmware"] == {"bootloader": {}}
    fw = applied({"firmware": {"preferredUseEfi": True, "preferredUseSecureBoot": True}})["spec"]["domain"]["firmware"]
    assert fw == {"bootloader": {"efi": {"secureBoot": True}}}
    fw = applied({"firmware": {"preferredUseBios": True, "preferredUseBiosSerial": True}})["spec"]["domain"]["firmware"]
    assert fw == {"bootloader": {"bios": {"useSerial": True}}}


def test_a_vm_bootloader_is_kept_and_only_completed():
    domain = {"firmware": {"uuid": "u", "bootloader": {"efi": {}}}}
    apply_firmware_preferences({"preferredUseBios": True, "preferredEfi": {"secureBoot": False},
                                "preferredUseSecureBoot": True}, domain)
    assert domain["firmware"] == {"uuid": "u", "bootloader": {"efi": {"secureBoot": True}}}
    bios = {"firmware": {"bootloader": {"bios": {"useSerial": False}}}}
    apply_firmware_preferences({"preferredUseBiosSerial": True, "preferredUseEfi": True}, bios)
    assert bios["firmware"] == {"bootloader": {"bios": {"useSerial": False}}}


def test_preferred_efi_wins_over_the_deprecated_fields():
    domain = {}
    apply_firmware_preferences({"preferredEfi": {"persistent": True}, "preferredUseSecureBoot": True}, domain)
    assert domain == {"firmware": {"bootloader": {"efi": {"persistent": True}}}}
    bios_first = {}
    apply_firmware_preferences({"preferredUseBios": True, "preferredEfi": {}}, bios_first)
    assert bios_first == {"firmware": {"bootloader": {"bios": {}}}}
