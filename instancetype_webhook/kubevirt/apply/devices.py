"""Instance type GPUs and host devices (upstream `apply/gpu.go`, `hostdevices.go`): the lists are
replaced, never merged; a VM with its own non-empty list conflicts."""
from __future__ import annotations

from typing import Any

from instancetype_webhook.kubevirt.apply.conflicts import conflict
from instancetype_webhook.kubevirt.causes import Cause
from instancetype_webhook.kubevirt.goshape import DEVICE, go_clone


def _apply_list(base: str, key: str, itype: dict[str, Any], domain: dict[str, Any]) -> list[Cause]:
    wanted = itype.get(key)
    if not wanted:
        return []
    devices = domain.get("devices") or {}
    if devices.get(key):
        return [conflict(base, "domain", "devices", key)]
    domain["devices"] = {**devices, key: go_clone(wanted, DEVICE)}
    return []


def apply_gpus(base: str, itype: dict[str, Any], domain: dict[str, Any]) -> list[Cause]:
    return _apply_list(base, "gpus", itype, domain)


def apply_host_devices(base: str, itype: dict[str, Any], domain: dict[str, Any]) -> list[Cause]:
    return _apply_list(base, "hostDevices", itype, domain)
