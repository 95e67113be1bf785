"""DeclarativeHotplugVolumes as each release evaluates it (releases.GATES): Alpha through v1.8 (off unless
listed), Beta from v1.9 (on unless disabled); off whenever HotplugVolumes is on. The planner follows it. And the
patch declarative hotplug makes to a running VMI."""
from __future__ import annotations

import copy

import pytest

from instancetype_webhook.kubevirt.configuration import settings_from_configuration
from instancetype_webhook.kubevirt.liveupdate import plan_update, start_vm
from instancetype_webhook.kubevirt.liveupdate.volumes import declarative_hotplug_enabled, is_declarative, volume_patch
from instancetype_webhook.kubevirt.releases import resolve
from instancetype_webhook.sources.catalog import load_catalog


def gates(enabled: list[str] | None = None, disabled: list[str] | None = None) -> dict:
    return {"developerConfiguration": {"featureGates": enabled or [], "disabledFeatureGates": disabled or []}}


@pytest.mark.parametrize(("release", "configuration", "expected"), [
    ("v1.7.4", gates(), False),
    ("v1.8.4", gates(), False),
    ("v1.8.4", gates(["DeclarativeHotplugVolumes"]), True),
    ("v1.8.4", gates(["DeclarativeHotplugVolumes", "HotplugVolumes"]), False),
    ("v1.9.0", gates(), True),
    ("v1.9.0", gates(disabled=["DeclarativeHotplugVolumes"]), False),
    ("main", gates(), True),
    ("main", gates(["HotplugVolumes"]), False),
])
def test_the_gate_per_release(release: str, configuration: dict, expected: bool) -> None:
    assert declarative_hotplug_enabled(configuration, resolve(release)) is expected


def test_the_planner_hotplugs_a_volume_on_v1_9_but_not_on_v1_8_without_the_gate() -> None:
    vm = {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
          "metadata": {"name": "web", "namespace": "apps", "uid": "0b6c-web"},
          "spec": {"runStrategy": "Always", "template": {"spec": {
              "domain": {"devices": {}, "cpu": {"sockets": 1}, "memory": {"guest": "2Gi"}},
              "volumes": [{"name": "root", "containerDisk": {"image": "quay.io/containerdisks/fedora:41"}}]}}}}
    new = copy.deepcopy(vm)
    spec = new["spec"]["template"]["spec"]
    spec["volumes"].append({"name": "data", "persistentVolumeClaim": {"claimName": "data", "hotpluggable": True}})
    spec["domain"]["devices"]["disks"] = [{"name": "data", "disk": {"bus": "scsi"}}]
    patched = {}
    for release in ("v1.8.4", "v1.9.0"):
        settings = settings_from_configuration(None, release=resolve(release))
        started = start_vm(vm, load_catalog(default_namespace="apps"), settings)
        patched[release] = plan_update(started, new, settings).vmi_patched
    assert "spec.volumes" not in patched["v1.8.4"]
    assert [v["name"] for v in patched["v1.9.0"]["spec.volumes"]] == ["root", "data"]


ROOT_VOL = {"name": "root", "containerDisk": {"image": "quay.io/containerdisks/fedora:41"}}
ROOT_DISK = {"name": "root", "disk": {"bus": "virtio"}}
HOT_VOL = {"name": "data", "persistentVolumeClaim": {"claimName": "data", "hotpluggable": True}}
HOT_DISK = {"name": "data", "disk": {"bus": "scsi"}}


def tspec(volumes: list, disks: list) -> dict:
    return {"domain": {"devices": {"disks": disks}}, "volumes": volumes}


def running(volumes: list, disks: list, phase: str = "Running") -> dict:
    return {"spec": tspec(volumes, disks), "status": {"phase": phase}}


def test_is_declarative() -> None:
    assert is_declarative(HOT_VOL)
    assert is_declarative({"name": "d", "dataVolume": {"name": "d", "hotpluggable": True}})
    assert not is_declarative({"name": "p", "persistentVolumeClaim": {"claimName": "p"}})
    assert not is_declarative({"name": "m", "memoryDump": {"claimName": "m"}})  # hotplug, not declarative
    assert not is_declarative(ROOT_VOL) and not is_declarative(None)


def test_an_added_hotpluggable_volume_goes_in_with_its_disk() -> None:
    patch = volume_patch(tspec([ROOT_VOL, HOT_VOL], [ROOT_DISK, HOT_DISK]), running([ROOT_VOL], [ROOT_DISK]), False)
    assert patch == {"spec.volumes": [ROOT_VOL, HOT_VOL], "spec.domain.devices.disks": [ROOT_DISK, HOT_DISK]}


def test_a_dropped_hotpluggable_volume_leaves_with_its_disk() -> None:
    vmi = running([ROOT_VOL, HOT_VOL], [ROOT_DISK, HOT_DISK])
    patch = volume_patch(tspec([ROOT_VOL], [ROOT_DISK]), vmi, False)
    assert patch == {"spec.volumes": [ROOT_VOL], "spec.domain.devices.disks": [ROOT_DISK]}


def test_nothing_is_patched_without_a_change_under_migration_or_on_a_vmi_not_running() -> None:
    vmi = running([ROOT_VOL, HOT_VOL], [ROOT_DISK, HOT_DISK])
    assert volume_patch(tspec([ROOT_VOL, HOT_VOL], [ROOT_DISK, HOT_DISK]), vmi, False) == {}
    new = tspec([ROOT_VOL, HOT_VOL], [ROOT_DISK, HOT_DISK])
    assert volume_patch(new, running([ROOT_VOL], [ROOT_DISK]), True) == {}
    assert volume_patch(new, running([ROOT_VOL], [ROOT_DISK], phase="Scheduling"), False) == {}


def test_a_plain_volume_added_is_not_hot_plugged() -> None:
    plain = {"name": "p", "persistentVolumeClaim": {"claimName": "p"}}
    assert volume_patch(tspec([ROOT_VOL, plain], [ROOT_DISK, {"name": "p", "disk": {}}]),
                        running([ROOT_VOL], [ROOT_DISK]), False) == {}
