"""Preference devices (upstream `preference/apply/device.go`, `disk.go`, `interface.go`): fill in only
what the VM leaves unset, except `preferredDisableHotplug`, which always overwrites."""
from __future__ import annotations

from typing import Any, Final

from instancetype_webhook.kubevirt.goshape import go_clone

# preference key -> VMI devices key; applied when the VMI value is nil (copied)
_POINTER_FIELDS: Final[tuple[tuple[str, str], ...]] = (
    ("preferredUseVirtioTransitional", "useVirtioTransitional"),
    ("preferredBlockMultiQueue", "blockMultiQueue"),
    ("preferredNetworkInterfaceMultiQueue", "networkInterfaceMultiqueue"),
)
_AUTOATTACH: Final[tuple[tuple[str, str], ...]] = (
    ("preferredAutoattachGraphicsDevice", "autoattachGraphicsDevice"),
    ("preferredAutoattachMemBalloon", "autoattachMemBalloon"),
    ("preferredAutoattachPodInterface", "autoattachPodInterface"),
    ("preferredAutoattachSerialConsole", "autoattachSerialConsole"),
    ("preferredAutoattachInputDevice", "autoattachInputDevice"),
)
# Interface binding methods (v1.InterfaceBindingMethod members) besides the `binding` plugin field.
BINDING_METHODS: Final[tuple[str, ...]] = ("bridge", "slirp", "masquerade", "sriov", "macvtap", "passt")


def apply_device_preferences(prefs: dict[str, Any], spec: dict[str, Any]) -> None:
    domain = spec.setdefault("domain", {})
    devices = domain.get("devices")
    devices = devices if isinstance(devices, dict) else {}
    domain["devices"] = devices
    for src, dst in _POINTER_FIELDS:
        if prefs.get(src) is not None and devices.get(dst) is None:
            devices[dst] = prefs[src]
    if prefs.get("preferredDisableHotplug") is not None:  # a plain bool upstream: always overwritten
        if prefs["preferredDisableHotplug"]:
            devices["disableHotplug"] = True
        else:
            devices.pop("disableHotplug", None)
    sound = devices.get("sound")
    if prefs.get("preferredSoundModel") and sound is not None and not sound.get("model"):
        devices["sound"] = {**sound, "model": prefs["preferredSoundModel"]}
    for src, dst in (("preferredRng", "rng"), ("preferredTPM", "tpm")):
        if prefs.get(src) is not None and devices.get(dst) is None:
            devices[dst] = go_clone(prefs[src])
    if prefs.get("preferredVideoType") is not None:  # creates `video: {}` even for an empty type
        video = dict(devices.get("video") or {})
        if not video.get("type") and prefs["preferredVideoType"]:
            video["type"] = prefs["preferredVideoType"]
        devices["video"] = video
    apply_autoattach_preferences(prefs, devices)
    _apply_disks(prefs, devices)
    _apply_interfaces(prefs, devices, spec.get("networks") or [])
    _apply_inputs(prefs, devices)
    _apply_panic_devices(prefs, devices)


def apply_autoattach_preferences(prefs: dict[str, Any], devices: dict[str, Any]) -> None:
    for src, dst in _AUTOATTACH:
        if prefs.get(src) is not None and devices.get(dst) is None:
            devices[dst] = prefs[src]


def _apply_disks(prefs: dict[str, Any], devices: dict[str, Any]) -> None:
    disks = devices.get("disks")
    if not disks:
        return
    devices["disks"] = [_disk(prefs, dict(d)) for d in disks]


def _disk(prefs: dict[str, Any], disk: dict[str, Any]) -> dict[str, Any]:
    if disk.get("disk") is None and disk.get("cdrom") is None and disk.get("lun") is None:
        disk["disk"] = {}
    if disk.get("disk") is not None:
        target = disk["disk"] = dict(disk["disk"])
        if prefs.get("preferredDiskBus") and not target.get("bus"):
            target["bus"] = prefs["preferredDiskBus"]
        if prefs.get("preferredDiskBlockSize") is not None and disk.get("blockSize") is None:
            disk["blockSize"] = go_clone(prefs["preferredDiskBlockSize"])
        if prefs.get("preferredDiskCache") and not disk.get("cache"):
            disk["cache"] = prefs["preferredDiskCache"]
        if prefs.get("preferredDiskIO") and not disk.get("io"):
            disk["io"] = prefs["preferredDiskIO"]
        if (
            prefs.get("preferredDiskDedicatedIoThread") is not None
            and disk.get("dedicatedIOThread") is None
            and target.get("bus") == "virtio"
        ):
            disk["dedicatedIOThread"] = prefs["preferredDiskDedicatedIoThread"]
    elif disk.get("cdrom") is not None:
        if prefs.get("preferredCdromBus") and not disk["cdrom"].get("bus"):
            disk["cdrom"] = {**disk["cdrom"], "bus": prefs["preferredCdromBus"]}
    elif prefs.get("preferredLunBus") and not disk["lun"].get("bus"):
        disk["lun"] = {**disk["lun"], "bus": prefs["preferredLunBus"]}
    return disk


def binding_unset(iface: dict[str, Any]) -> bool:
    return all(iface.get(m) is None for m in BINDING_METHODS) and iface.get("binding") is None


def on_pod_network(name: str, networks: Any) -> bool:  # spec.networks as decoded: a list when well-formed
    for network in networks:
        if network.get("name") == name:
            return network.get("pod") is not None
    return False


def _apply_interfaces(prefs: dict[str, Any], devices: dict[str, Any], networks: Any) -> None:
    interfaces = devices.get("interfaces")
    if not interfaces:
        return
    model = prefs.get("preferredInterfaceModel")
    masquerade = prefs.get("preferredInterfaceMasquerade")
    result = []
    for iface in interfaces:
        iface = dict(iface)
        if model and not iface.get("model"):
            iface["model"] = model
        if masquerade is not None and binding_unset(iface) and on_pod_network(iface.get("name", ""), networks):
            iface["masquerade"] = go_clone(masquerade)
        result.append(iface)
    devices["interfaces"] = result


def _apply_inputs(prefs: dict[str, Any], devices: dict[str, Any]) -> None:
    bus, kind = prefs.get("preferredInputBus"), prefs.get("preferredInputType")
    inputs = devices.get("inputs")
    if not inputs or not (bus or kind):
        return
    result = []
    for device in inputs:
        device = dict(device)
        if bus and not device.get("bus"):
            device["bus"] = bus
        if kind and not device.get("type"):
            device["type"] = kind
        result.append(device)
    devices["inputs"] = result


def _apply_panic_devices(prefs: dict[str, Any], devices: dict[str, Any]) -> None:
    model = prefs.get("preferredPanicDeviceModel")
    if model is None:
        return
    panic = devices.get("panicDevices")
    if not panic:
        devices["panicDevices"] = [{"model": model}]
        return
    devices["panicDevices"] = [d if d.get("model") is not None else {**d, "model": model} for d in panic]
