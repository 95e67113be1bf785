"""Declarative volume hotplug (pkg/storage/hotplug `HandleDeclarativeVolumes`), which virt-controller's VM
sync runs under both rollout strategies, restart or not, when the `DeclarativeHotplugVolumes` feature gate
is on as the release evaluates it (Alpha through v1.8, Beta from v1.9; off when `HotplugVolumes` is on) and the VM's
`updateVolumesStrategy` is not Migration: hotpluggable PVC/DataVolume volumes the VM adds go into the
running VMI with their disks, the ones it drops or changes leave it. Lists are patched whole."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from instancetype_webhook.kubevirt.jsondata import clone_tree
from instancetype_webhook.kubevirt.liveupdate.semantic import semantic_equal
from instancetype_webhook.kubevirt.releases import MAIN_PROFILE, ReleaseProfile

GATE: Final = "DeclarativeHotplugVolumes"
LEGACY_GATE: Final = "HotplugVolumes"


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def declarative_hotplug_enabled(configuration: Mapping[str, Any], release: ReleaseProfile = MAIN_PROFILE) -> bool:
    """vm.go: declarative hotplug runs unless `HotplugVolumes` is on or `DeclarativeHotplugVolumes` is off, as
    `release` evaluates its gates (Alpha through v1.8: off unless listed; Beta from v1.9: on unless disabled)."""
    return release.gate_enabled(GATE, configuration) and not release.gate_enabled(LEGACY_GATE, configuration)


def is_declarative(volume: dict[str, Any] | None) -> bool:
    """storagetypes.IsDeclarativeHotplugVolume: a hotpluggable PVC or DataVolume."""
    return any(_obj((volume or {}).get(key)).get("hotpluggable") is True for key in ("persistentVolumeClaim",
                                                                                    "dataVolume"))


def _disks(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return _list(_obj(_obj(spec.get("domain")).get("devices")).get("disks"))


def _new_volumes(vm_spec: dict[str, Any], vmi: dict[str, Any]) -> list[dict[str, Any]]:
    vmi_spec = _obj(vmi.get("spec"))
    vm_vols = {str(v.get("name", "")): v for v in _list(vm_spec.get("volumes"))}
    kept = []
    for volume in _list(vmi_spec.get("volumes")):
        if is_declarative(volume):
            vm_volume = vm_vols.get(str(volume.get("name", "")))
            if vm_volume is None or (is_declarative(vm_volume) and not semantic_equal(vm_volume, volume)):
                continue
        kept.append(clone_tree(volume))
    present = {v.get("name") for v in _list(vmi_spec.get("volumes"))}
    present |= {s.get("name") for s in _list(_obj(vmi.get("status")).get("volumeStatus"))}
    added = [clone_tree(v) for v in _list(vm_spec.get("volumes")) if is_declarative(v) and v.get("name") not in present]
    return kept + added


def _new_disks(vm_spec: dict[str, Any], vmi: dict[str, Any], volumes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    by_name = {str(v.get("name", "")): v for v in volumes}
    vm_disks = {str(d.get("name", "")): d for d in _disks(vm_spec)}
    vm_vols = {str(v.get("name", "")) for v in _list(vm_spec.get("volumes"))}
    kept = []
    for disk in _disks(_obj(vmi.get("spec"))):
        name = str(disk.get("name", ""))
        if name not in by_name:
            vm_disk = vm_disks.get(name)
            if vm_disk is None:
                continue
            if name in vm_vols and (vm_disk.get("cdrom") is None or disk.get("cdrom") is None):
                continue
        kept.append(clone_tree(disk))
    vmi_disk_names = {d.get("name") for d in _disks(_obj(vmi.get("spec")))}
    added = [clone_tree(d) for d in _disks(vm_spec)
             if is_declarative(by_name.get(str(d.get("name", "")))) and d.get("name") not in vmi_disk_names]
    return kept + added


def volume_patch(vm_spec: dict[str, Any], vmi: dict[str, Any], migration_strategy: bool) -> dict[str, Any]:
    """`{path: value}` of what declarative hotplug patches into a running VMI (empty when nothing changes)."""
    if migration_strategy or _obj(vmi.get("status")).get("phase") != "Running":
        return {}
    volumes = _new_volumes(vm_spec, vmi)
    disks = _new_disks(vm_spec, vmi, volumes)
    vmi_spec = _obj(vmi.get("spec"))
    if semantic_equal(vmi_spec.get("volumes"), volumes) and semantic_equal(_disks(vmi_spec), disks):
        return {}
    return {"spec.volumes": volumes, "spec.domain.devices.disks": disks}
