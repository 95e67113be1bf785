"""syncRestartRequired: the expanded templates of the VM as started and as edited, with what may change
without a restart copied over (hotplug volumes and disks, the live fields under LiveUpdate, accepted network
changes, the firmware uuid), then compared."""
from __future__ import annotations

import copy
from typing import Any

import pytest

from instancetype_webhook.kubevirt.liveupdate.restart import (
    expanded_template_spec,
    is_hotplug_volume,
    restart_required,
    valid_live_update_disks,
    valid_live_update_volumes,
)
from instancetype_webhook.sources.catalog import load_catalog

ROOT_VOL = {"name": "root", "containerDisk": {"image": "quay.io/containerdisks/fedora:41"}}
ROOT_DISK = {"name": "root", "disk": {"bus": "virtio"}}
HOT_VOL = {"name": "data", "persistentVolumeClaim": {"claimName": "data", "hotpluggable": True}}
HOT_DISK = {"name": "data", "disk": {"bus": "scsi"}}
RUNNING = {"spec": {}, "status": {"conditions": [{"type": "LiveMigratable", "status": "True"}]}}


def tspec(volumes: list[dict[str, Any]], disks: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"domain": {"devices": {"disks": disks}}, "volumes": volumes, **extra}


def vm(spec: dict[str, Any] | None = None, **matchers: Any) -> dict[str, Any]:
    template = {"spec": spec or {"domain": {"cpu": {"sockets": 1}, "memory": {"guest": "2Gi"}, "devices": {}}}}
    return {"metadata": {"name": "web", "namespace": "apps"}, "spec": {"template": template, **matchers}}


def edited(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    out = copy.deepcopy(base)
    out["spec"]["template"]["spec"].update(changes)
    return out


@pytest.mark.parametrize(("volume", "hot"), [
    (HOT_VOL, True),
    ({"name": "d", "dataVolume": {"name": "d", "hotpluggable": True}}, True),
    ({"name": "m", "memoryDump": {"claimName": "m"}}, True),
    ({"name": "p", "persistentVolumeClaim": {"claimName": "p"}}, False),
    ({"name": "p", "persistentVolumeClaim": {"claimName": "p", "hotpluggable": False}}, False),
    (ROOT_VOL, False),
])
def test_is_hotplug_volume(volume: dict[str, Any], hot: bool) -> None:
    assert is_hotplug_volume(volume) is hot


def test_volumes_may_gain_or_lose_only_hotplug_ones() -> None:
    old = tspec([ROOT_VOL], [ROOT_DISK])
    assert valid_live_update_volumes(old, tspec([ROOT_VOL, HOT_VOL], []), False)
    assert valid_live_update_volumes(tspec([ROOT_VOL, HOT_VOL], []), old, False)
    assert not valid_live_update_volumes(old, tspec([ROOT_VOL, {"name": "x", "emptyDisk": {"capacity": "1Gi"}}], []),
                                         False)
    assert not valid_live_update_volumes(old, tspec([], []), False)  # a plain volume removed
    changed = {"name": "root", "containerDisk": {"image": "other"}}
    assert not valid_live_update_volumes(old, tspec([changed], []), False)


def test_the_migration_strategy_lets_a_claim_change() -> None:
    old = tspec([{"name": "p", "persistentVolumeClaim": {"claimName": "a"}}], [])
    new = tspec([{"name": "p", "persistentVolumeClaim": {"claimName": "b"}}], [])
    assert valid_live_update_volumes(old, new, True)
    assert not valid_live_update_volumes(old, new, False)


def test_disks_may_change_only_for_hotplug_volumes() -> None:
    old = tspec([ROOT_VOL], [ROOT_DISK])
    assert valid_live_update_disks(old, tspec([ROOT_VOL, HOT_VOL], [ROOT_DISK, HOT_DISK]))
    assert not valid_live_update_disks(old, tspec([ROOT_VOL], [{"name": "root", "disk": {"bus": "sata"}}]))
    assert not valid_live_update_disks(old, tspec([ROOT_VOL], []))  # the disk of a plain volume removed
    cdrom = tspec([], [{"name": "cd", "cdrom": {"bus": "sata"}}])
    assert not valid_live_update_disks(cdrom, tspec([], []))  # a CD-ROM drive stays


def test_expanded_template_spec_applies_the_instance_type_or_says_none() -> None:
    source = load_catalog(default_namespace="apps")
    spec = expanded_template_spec(vm({"domain": {"devices": {}}}, instancetype={"name": "u1.medium"}), source)
    assert spec is not None and spec["domain"]["cpu"]["sockets"] == 1 and spec["domain"]["memory"]["guest"] == "4Gi"
    assert expanded_template_spec(vm(instancetype={"name": "nope"}), source) is None  # a failed lookup
    assert expanded_template_spec(vm(instancetype={"name": "u1.medium"}), source) is None  # a conflict


@pytest.mark.parametrize(("change", "live_update", "restart"), [
    ({}, True, False),
    ({"hostname": "other"}, True, True),
    ({"hostname": "other"}, False, True),
    ({"domain": {"cpu": {"sockets": 2}, "memory": {"guest": "2Gi"}, "devices": {}}}, True, False),
    ({"domain": {"cpu": {"sockets": 2}, "memory": {"guest": "2Gi"}, "devices": {}}}, False, True),
    ({"domain": {"cpu": {"sockets": 1}, "memory": {"guest": "4Gi"}, "devices": {}}}, True, False),
    ({"nodeSelector": {"zone": "a"}}, True, False),
    ({"nodeSelector": {"zone": "a"}}, False, True),
    ({"tolerations": [{"key": "k", "operator": "Exists"}]}, True, False),
    ({"volumes": [HOT_VOL], "domain": {"cpu": {"sockets": 1}, "memory": {"guest": "2Gi"},
                                       "devices": {"disks": [HOT_DISK]}}}, False, False),
])
def test_restart_required(change: dict[str, Any], live_update: bool, restart: bool) -> None:
    source = load_catalog(default_namespace="apps")
    start = vm()
    assert restart_required(start, edited(start, **change), RUNNING, source, live_update) is restart


def test_a_vm_that_cannot_be_expanded_never_asks_for_a_restart() -> None:
    source = load_catalog(default_namespace="apps")
    start = vm()
    broken = vm({"hostname": "x"}, instancetype={"name": "nope"})
    assert not restart_required(start, broken, RUNNING, source, True)
    assert not restart_required(broken, start, RUNNING, source, True)


def test_the_firmware_uuid_the_vmi_runs_with_is_no_change() -> None:
    source = load_catalog(default_namespace="apps")
    start = vm()
    with_uuid = edited(start, domain={"cpu": {"sockets": 1}, "memory": {"guest": "2Gi"}, "devices": {},
                                      "firmware": {"uuid": "u-1"}})
    vmi = {**RUNNING, "spec": {"domain": {"firmware": {"uuid": "u-1"}}}}
    assert not restart_required(start, with_uuid, vmi, source, True)
    other = {**RUNNING, "spec": {"domain": {"firmware": {"uuid": "u-2"}}}}
    assert restart_required(start, with_uuid, other, source, True)


def test_the_callers_expanded_spec_is_used_and_not_changed() -> None:
    source = load_catalog(default_namespace="apps")
    start = vm()
    expanded = {"domain": {"cpu": {"sockets": 1}, "memory": {"guest": "2Gi"}, "devices": {}}, "hostname": "h"}
    kept = copy.deepcopy(expanded)
    assert restart_required(start, start, RUNNING, source, True, expanded=expanded)
    assert expanded == kept
