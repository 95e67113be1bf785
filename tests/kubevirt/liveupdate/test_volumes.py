"""DeclarativeHotplugVolumes as each release evaluates it (releases.GATES): Alpha through v1.8 (off unless
listed), Beta from v1.9 (on unless disabled); off whenever HotplugVolumes is on. The planner follows it."""
from __future__ import annotations

import copy

import pytest

from instancetype_webhook.kubevirt.configuration import settings_from_configuration
from instancetype_webhook.kubevirt.liveupdate import plan_update, start_vm
from instancetype_webhook.kubevirt.liveupdate.volumes import declarative_hotplug_enabled
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
