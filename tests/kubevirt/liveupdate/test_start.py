"""A VM as created and started, reproduced offline: the stored VM (defaults, firmware uuid, revision refs),
the VM-start spec, the running VMI with its hotplug limits; and the RFC 7386 merge patch."""
from __future__ import annotations

import uuid
from typing import Any

import pytest

from instancetype_webhook.kubevirt.configuration import settings_from_configuration
from instancetype_webhook.kubevirt.liveupdate import StartError, merge_patch
from instancetype_webhook.kubevirt.liveupdate.revisions import controller_revision
from instancetype_webhook.kubevirt.liveupdate.start import (
    FIRMWARE_UUID_NAMESPACE,
    legacy_firmware_uuid,
    start_vm,
    vm_defaults,
)
from instancetype_webhook.kubevirt.releases import resolve
from instancetype_webhook.kubevirt.source import CLUSTER_INSTANCETYPE, InMemorySource
from instancetype_webhook.sources.catalog import load_catalog
from tests.kit.builders import undecodable_revision
from tests.kit.builders import vm as build_vm

ROOT = [{"name": "root", "containerDisk": {"image": "quay.io/containerdisks/fedora:41"}}]


def typed_vm(**spec: Any) -> dict[str, Any]:
    return build_vm("web", "apps", metadata={"uid": "0b6c-web"}, run_strategy="Always", template={"volumes": ROOT},
                    spec={"instancetype": {"name": "u1.medium"}, "preference": {"name": "fedora"}, **spec},
                    domain={"devices": {}})


def started(vm: dict[str, Any], config: dict[str, Any] | None = None):
    return start_vm(vm, load_catalog(default_namespace="apps"), settings_from_configuration(config))


def test_merge_patch() -> None:
    target = {"spec": {"a": 1, "b": {"c": 2}, "l": [1, 2]}, "status": {"x": 1}}
    patched = merge_patch(target, {"spec": {"b": {"c": None, "d": 3}, "l": [3]}, "status": None})
    assert patched == {"spec": {"a": 1, "b": {"d": 3}, "l": [3]}}
    assert target["spec"]["b"] == {"c": 2}  # not changed in place


def test_merge_patch_replaces_non_objects() -> None:
    assert merge_patch({"a": 1}, [1, 2]) == [1, 2]
    assert merge_patch("x", {"a": {"b": 1}}) == {"a": {"b": 1}}


def test_legacy_firmware_uuid_is_the_name_based_uuid5() -> None:
    assert legacy_firmware_uuid("web") == str(uuid.uuid5(FIRMWARE_UUID_NAMESPACE, "web"))
    assert legacy_firmware_uuid("web") == legacy_firmware_uuid("web") != legacy_firmware_uuid("db")


def test_vm_defaults_fill_architecture_and_machine_type_but_keep_set_ones() -> None:
    settings = settings_from_configuration(None)
    vm = {"spec": {"template": {"spec": {}}}}
    vm_defaults(vm, settings)
    assert vm["spec"]["template"]["spec"] == {"architecture": "amd64", "domain": {"machine": {"type": "q35"}}}
    arm = {"spec": {"template": {"spec": {"architecture": "arm64", "domain": {"machine": {"type": "mine"}}}}}}
    vm_defaults(arm, settings)
    assert arm["spec"]["template"]["spec"]["domain"]["machine"] == {"type": "mine"}
    s390 = {"spec": {"template": {"spec": {"architecture": "s390x"}}}}
    vm_defaults(s390, settings)
    assert s390["spec"]["template"]["spec"]["domain"]["machine"] == {"type": "s390-ccw-virtio"}


def test_the_stored_vm_references_the_revisions_it_started_with() -> None:
    run = started(typed_vm())
    meta, status = run.stored_vm["metadata"], run.stored_vm["status"]
    assert meta["generation"] == 1
    assert run.stored_vm["spec"]["template"]["spec"]["domain"]["firmware"] == {"uuid": legacy_firmware_uuid("web")}
    names = [status[key]["controllerRevisionRef"]["name"] for key in ("instancetypeRef", "preferenceRef")]
    assert names == ["web-u1.medium-v1beta1--0", "web-fedora-v1beta1--0"]
    assert status["instancetypeRef"]["kind"] == "VirtualMachineClusterInstancetype"
    assert run.start_spec["instancetype"] == {"name": "u1.medium", "revisionName": names[0]}
    assert sorted(run.source.revisions) == sorted(names)


def test_an_explicit_revision_name_is_referenced_not_created() -> None:
    vm = build_vm("web", "apps", template={"volumes": ROOT}, domain={"devices": {}},
                  spec={"instancetype": {"name": "u1.medium", "revisionName": "kept-rev"}})
    source = load_catalog(default_namespace="apps")
    with pytest.raises(StartError, match='controllerrevisions.apps "kept-rev" not found'):
        start_vm(vm, source, settings_from_configuration(None))
    obj = source.get(CLUSTER_INSTANCETYPE, "u1.medium")
    revision = controller_revision(vm, CLUSTER_INSTANCETYPE, {**obj, "kind": CLUSTER_INSTANCETYPE})
    revision["metadata"]["name"] = "kept-rev"
    source.add(revision)
    run = start_vm(vm, source, settings_from_configuration(None))
    assert run.stored_vm["status"]["instancetypeRef"]["controllerRevisionRef"] == {"name": "kept-rev"}
    assert run.source.revisions == {}


def test_the_running_vmi_carries_hotplug_limits_under_live_update_only() -> None:
    live = started(typed_vm()).vmi
    assert live["status"]["phase"] == "Running"
    assert live["spec"]["domain"]["cpu"]["maxSockets"] == 4 and live["spec"]["domain"]["memory"]["maxGuest"] == "16Gi"
    assert live["status"]["memory"] == {"guestAtBoot": "4Gi", "guestCurrent": "4Gi", "guestRequested": "4Gi"}
    assert live["status"]["currentCPUTopology"] == {"sockets": 1, "cores": 1, "threads": 1}
    staged = started(typed_vm(), {"vmRolloutStrategy": "Stage"}).vmi
    assert "maxSockets" not in staged["spec"]["domain"]["cpu"]
    assert "maxGuest" not in staged["spec"]["domain"]["memory"]


@pytest.mark.parametrize(("vm", "message"), [
    ({}, "no spec.template"),
    ({"spec": {"template": "x"}}, "no spec.template"),
    (build_vm("", "apps", template={"volumes": ROOT}), "no metadata.name"),
    (build_vm("web", "apps", spec={"instancetype": {"name": "nope"}}), '"nope" not found'),
])
def test_a_vm_that_cannot_start_says_why(vm: dict[str, Any], message: str) -> None:
    with pytest.raises(StartError, match=message):
        started(vm)


@pytest.mark.parametrize(("release", "line"), [("v1.7.4", 42), ("v1.8.4", 43), ("main", 44)])
def test_a_pinned_revision_the_scheme_cannot_decode_stops_the_start_in_the_releases_words(release: str,
                                                                                          line: int) -> None:
    """The running VMI's lookups decode the revision as the cluster's release: the error names its register.go
    line (a lookup as main would name line 44 on every release)."""
    source = load_catalog(default_namespace="apps")
    source.add(undecodable_revision("fedora-v1alpha2", "apps", "fedora"))
    pinned = typed_vm(preference={"name": "fedora", "revisionName": "fedora-v1alpha2"})
    with pytest.raises(StartError) as raised:
        start_vm(pinned, source, settings_from_configuration(None, release=resolve(release)))
    assert str(raised.value) == (
        'failed to decode object in ControllerRevision: no kind "VirtualMachineClusterPreference" is registered '
        f'for version "instancetype.kubevirt.io/v1alpha2" in scheme "kubevirt.io/client-go/kubevirt/scheme/'
        f'register.go:{line}"')


def plain_vm(architecture: str, domain: dict[str, Any], volumes: list[dict[str, Any]] = ROOT) -> dict[str, Any]:
    return build_vm("web", "apps", metadata={"uid": "0b6c-web"}, run_strategy="Always",
                    template={"volumes": volumes, "architecture": architecture},
                    domain={"cpu": {"sockets": 1}, "memory": {"guest": "2Gi"}, **domain})


def _release_started(vm: dict[str, Any], release: str, config: dict[str, Any] | None = None):
    return start_vm(vm, load_catalog(default_namespace="apps"),
                    settings_from_configuration(config, release=resolve(release)))


@pytest.mark.parametrize(("architecture", "bus"), [("amd64", "sata"), ("arm64", "virtio"), ("s390x", "virtio")])
def test_the_running_vmi_carries_virt_api_s_vmi_defaults(architecture: str, bus: str) -> None:
    vm = plain_vm(architecture, {"devices": {"disks": [{"name": "root"}, {"name": "iso", "cdrom": {}}]}},
                  [*ROOT, {"name": "iso", "containerDisk": {"image": "quay.io/containerdisks/tools:1"}}])
    vmi = _release_started(vm, "v1.9.0").vmi
    assert vmi["spec"]["domain"]["devices"]["disks"] == [
        {"name": "root", "disk": {"bus": bus}},
        {"name": "iso", "cdrom": {"bus": bus, "readOnly": True, "tray": "closed"}}]
    assert vmi["status"]["runtimeUser"] == 107 and vmi["status"]["phase"] == "Running"
    pcie = architecture != "s390x"
    assert ("kubevirt.io/pci-topology-version" in vmi["metadata"].get("annotations", {})) is pcie


def test_the_running_arm64_vmi_s_efi_gets_secure_boot_off_from_v1_8_3() -> None:
    vm = plain_vm("arm64", {"devices": {}, "firmware": {"bootloader": {"efi": {}}}})
    efi = _release_started(vm, "v1.8.4").vmi["spec"]["domain"]["firmware"]["bootloader"]["efi"]
    assert efi == {"secureBoot": False}


@pytest.mark.parametrize("efi", [{}, {"secureBoot": True}])
def test_before_v1_8_3_an_arm64_efi_with_secure_boot_unset_or_on_cannot_start(efi: dict[str, Any]) -> None:
    vm = plain_vm("arm64", {"devices": {}, "firmware": {"bootloader": {"efi": efi}}})
    with pytest.raises(StartError, match="UEFI secure boot is currently not supported on aarch64 Arch"):
        _release_started(vm, "v1.8.2")
    assert _release_started(vm, "v1.8.3").vmi["status"]["phase"] == "Running"


def test_before_v1_8_3_the_arm64_default_efi_starts() -> None:
    efi = _release_started(plain_vm("arm64", {"devices": {}}), "v1.8.2").vmi["spec"]["domain"]["firmware"]
    assert efi["bootloader"] == {"efi": {"secureBoot": False}}


def test_the_running_vmi_gets_a_panic_device_from_the_preference_only_from_v1_9() -> None:
    source = InMemorySource([{"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachinePreference",
                              "metadata": {"name": "panicky", "namespace": "apps"},
                              "spec": {"devices": {"preferredPanicDeviceModel": "hyperv"}}}],
                            default_namespace="apps")
    vm = build_vm("panicky-vm", namespace="apps", preference={"kind": "VirtualMachinePreference", "name": "panicky"})
    panics = {}
    for release in ("v1.8.4", "v1.9.0"):
        run = start_vm(vm, source, settings_from_configuration(None, release=resolve(release)))
        panics[release] = run.vmi["spec"]["domain"]["devices"].get("panicDevices")
    assert panics == {"v1.8.4": None, "v1.9.0": [{"model": "hyperv"}]}
