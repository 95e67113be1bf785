"""`syncRestartRequired` (pkg/virt-controller/watch/vm/vm.go): does the edit need a restart?

The spec the VM started with and the current VM are both expanded (ApplyToVM: the instance type and
preference applied to the template, nothing else). Fields that can change without a restart are copied
from the current template into the started one, then the two template specs are compared:
- volumes and disks when only hotpluggable ones changed (both strategies);
- under LiveUpdate: CPU sockets, guest memory, nodeSelector, affinity, tolerations;
- interfaces and networks when the network rules accept the change against the VMI (both strategies);
- the firmware uuid when the VMI has the current VM's.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from instancetype_webhook.kubevirt.apply.vmi import apply_to_template
from instancetype_webhook.kubevirt.causes import ExpandError
from instancetype_webhook.kubevirt.find import find_instancetype_spec, find_preference_spec
from instancetype_webhook.kubevirt.jsondata import clone_tree
from instancetype_webhook.kubevirt.liveupdate.network import network_restart_required
from instancetype_webhook.kubevirt.liveupdate.semantic import semantic_equal
from instancetype_webhook.kubevirt.quantity import QuantityError
from instancetype_webhook.kubevirt.releases import MAIN_PROFILE, ReleaseProfile
from instancetype_webhook.kubevirt.source import Source


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def expanded_template_spec(vm: dict[str, Any], source: Source,
                           release: ReleaseProfile = MAIN_PROFILE) -> dict[str, Any] | None:
    """ApplyToVM on a copy: the template spec with the instance type and preference applied, or None when a
    lookup fails or the instance type conflicts (upstream then skips the decision)."""
    template = clone_tree(_obj(_obj(vm.get("spec")).get("template")))
    template.setdefault("spec", {})
    try:
        instancetype = find_instancetype_spec(vm, source, release)
        preference = find_preference_spec(vm, source, release)
        if apply_to_template(template, instancetype, preference, release):
            return None
    except (ExpandError, QuantityError, TypeError, AttributeError, KeyError, ValueError):
        return None
    return _obj(template.get("spec"))


def is_hotplug_volume(volume: dict[str, Any]) -> bool:
    """storagetypes.IsHotplugVolume: a hotpluggable DataVolume or PVC, or a memory dump volume."""
    for key in ("dataVolume", "persistentVolumeClaim"):
        if _obj(volume.get(key)).get("hotpluggable") is True:
            return True
    return volume.get("memoryDump") is not None


def _by_name(items: Any) -> dict[str, dict[str, Any]]:
    return {str(item.get("name", "")): item for item in items or [] if isinstance(item, dict)}


def _disks(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return list(_obj(_obj(spec.get("domain")).get("devices")).get("disks") or [])


def valid_live_update_volumes(old: dict[str, Any], new: dict[str, Any], migration_strategy: bool) -> bool:
    old_vols = _by_name(old.get("volumes"))
    for volume in new.get("volumes") or []:
        name = str(volume.get("name", ""))
        if is_hotplug_volume(volume):
            old_vols.pop(name, None)
        elif name not in old_vols:
            return False
        elif migration_strategy and (volume.get("persistentVolumeClaim") is not None
                                     or volume.get("dataVolume") is not None):
            old_vols.pop(name, None)
        elif not semantic_equal(old_vols[name], volume):
            return False
        else:
            old_vols.pop(name, None)
    return all(is_hotplug_volume(v) for v in old_vols.values())


def valid_live_update_disks(old: dict[str, Any], new: dict[str, Any]) -> bool:
    old_disks = _by_name(_disks(old))
    old_vols, new_vols, new_disks = _by_name(old.get("volumes")), _by_name(new.get("volumes")), _by_name(_disks(new))
    for disk in _disks(new):
        name = str(disk.get("name", ""))
        if name in new_vols and is_hotplug_volume(new_vols[name]):
            old_disks.pop(name, None)
        elif name not in old_disks or not semantic_equal(old_disks[name], disk):
            return False
        else:
            old_disks.pop(name, None)
    for name, disk in old_disks.items():
        if name in old_vols and not is_hotplug_volume(old_vols[name]):
            return False
        if disk.get("cdrom") is not None and name not in new_disks:
            return False
    return True


def _set_devices(spec: dict[str, Any], key: str, value: Any) -> None:
    devices = spec.setdefault("domain", {}).setdefault("devices", {})
    if value is None:
        devices.pop(key, None)
    else:
        devices[key] = value


def _copy(into: dict[str, Any], src: dict[str, Any], key: str) -> None:
    if key in src:
        into[key] = src[key]
    else:
        into.pop(key, None)


def restart_required(start_vm: dict[str, Any], current_vm: dict[str, Any], vmi: dict[str, Any], source: Source,
                     live_update: bool, expanded: dict[str, Any] | None = None,
                     release: ReleaseProfile = MAIN_PROFILE, configuration: Mapping[str, Any] | None = None) -> bool:
    """Whether syncRestartRequired sets the generic RestartRequired (False when either VM cannot be expanded).
    `expanded`: the current VM's expanded template spec when the caller has it (read, never changed);
    `release` and `configuration` (the merged KubeVirtConfiguration) decide the network rules."""
    current = clone_tree(expanded) if expanded is not None else expanded_template_spec(current_vm, source, release)
    last_seen = expanded_template_spec(start_vm, source, release)
    if current is None or last_seen is None:
        return False
    migration = _obj(current_vm.get("spec")).get("updateVolumesStrategy") == "Migration"
    if valid_live_update_volumes(last_seen, current, migration):
        _copy(last_seen, current, "volumes")
    if valid_live_update_disks(last_seen, current):
        _set_devices(last_seen, "disks", _obj(_obj(current.get("domain")).get("devices")).get("disks"))
    if live_update:
        _copy_live_fields(last_seen, current)
    if not network_restart_required(current, vmi, release, configuration):
        _set_devices(last_seen, "interfaces", _obj(_obj(current.get("domain")).get("devices")).get("interfaces"))
        _copy(last_seen, current, "networks")
    vmi_uuid = _obj(_obj(_obj(vmi.get("spec")).get("domain")).get("firmware")).get("uuid")
    if vmi_uuid:
        _default_firmware_uuid(last_seen, vmi_uuid)
        _default_firmware_uuid(current, vmi_uuid)
    _neutralize_firmware_uuid(last_seen, current, vmi)
    return not semantic_equal(last_seen, current)


def _copy_live_fields(last_seen: dict[str, Any], current: dict[str, Any]) -> None:
    last_domain = last_seen.setdefault("domain", {})
    domain = _obj(current.get("domain"))
    if isinstance(last_domain.get("cpu"), dict) and isinstance(domain.get("cpu"), dict):
        last_domain["cpu"] = {**last_domain["cpu"], "sockets": domain["cpu"].get("sockets", 0)}
    memory = _obj(domain.get("memory"))
    if memory.get("guest") is not None:
        last_domain["memory"] = {**_obj(last_domain.get("memory")), "guest": memory["guest"]}
    for key in ("nodeSelector", "affinity", "tolerations"):
        _copy(last_seen, current, key)


def _default_firmware_uuid(spec: dict[str, Any], vmi_uuid: str) -> None:
    """A template without a firmware uuid gets the VMI's: virt-controller's firmware synchronizer persists it."""
    domain = spec.setdefault("domain", {})
    firmware = _obj(domain.get("firmware"))
    if not firmware.get("uuid"):
        domain["firmware"] = {**firmware, "uuid": vmi_uuid}


def _neutralize_firmware_uuid(last_seen: dict[str, Any], current: dict[str, Any], vmi: dict[str, Any]) -> None:
    vmi_firmware = _obj(_obj(vmi.get("spec")).get("domain")).get("firmware")
    firmware = _obj(current.get("domain")).get("firmware")
    if not isinstance(vmi_firmware, dict) or not isinstance(firmware, dict):
        return
    if vmi_firmware.get("uuid", "") == firmware.get("uuid", ""):
        last_domain = last_seen.setdefault("domain", {})
        last_firmware = dict(_obj(last_domain.get("firmware")))
        if "uuid" in firmware:
            last_firmware["uuid"] = firmware["uuid"]
        else:
            last_firmware.pop("uuid", None)
        last_domain["firmware"] = last_firmware
