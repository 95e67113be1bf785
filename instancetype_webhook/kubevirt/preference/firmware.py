"""Preference firmware (upstream `preference/apply/firmware.go`): the bootloader is created (possibly
empty) whenever the preference has a `firmware` section."""
from __future__ import annotations

from typing import Any

from instancetype_webhook.kubevirt.goshape import go_clone


def apply_firmware_preferences(prefs: dict[str, Any], domain: dict[str, Any]) -> None:
    firmware = dict(domain.get("firmware") or {})
    domain["firmware"] = firmware
    boot = dict(firmware.get("bootloader") or {})
    firmware["bootloader"] = boot
    if prefs.get("preferredUseBios") and boot.get("bios") is None and boot.get("efi") is None:
        boot["bios"] = {}
    if (prefs.get("preferredUseBiosSerial") is not None and boot.get("bios") is not None
            and boot["bios"].get("useSerial") is None):
        boot["bios"] = {**boot["bios"], "useSerial": prefs["preferredUseBiosSerial"]}
    if boot.get("efi") is None and boot.get("bios") is None and prefs.get("preferredEfi") is not None:
        boot["efi"] = go_clone(prefs["preferredEfi"])
        return
    if prefs.get("preferredUseEfi") and boot.get("efi") is None and boot.get("bios") is None:
        boot["efi"] = {}
    if (prefs.get("preferredUseSecureBoot") is not None and boot.get("efi") is not None
            and boot["efi"].get("secureBoot") is None):
        boot["efi"] = {**boot["efi"], "secureBoot": prefs["preferredUseSecureBoot"]}
