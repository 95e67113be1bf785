"""The expand-vm-spec defaults (spec 4.3 step 5), driven by ClusterSettings."""
from __future__ import annotations

import pytest

from instancetype_webhook.kubevirt.causes import ExpandError
from instancetype_webhook.kubevirt.configuration import DEFAULT_SETTINGS, ClusterSettings
from instancetype_webhook.kubevirt.defaults import (
    set_default_network_interface,
    set_default_volume_disks,
    set_vmi_spec_defaults,
)


def defaulted(spec, settings=DEFAULT_SETTINGS):
    set_vmi_spec_defaults(spec, settings)
    return spec


def test_empty_spec_gets_every_default():
    assert defaulted({}) == {
        "architecture": "amd64",
        "domain": {"machine": {"type": "q35"}, "memory": {}, "cpu": {"sockets": 1, "cores": 1, "threads": 1},
                   "devices": {"interfaces": [{"name": "default", "bridge": {}}]}},
        "evictionStrategy": "None",
        "networks": [{"name": "default", "pod": {}}],
    }


# virt-config GetMachineType: arm64 and s390x have their own, any other architecture gets amd64's
@pytest.mark.parametrize("arch, machine", [("arm64", "virt"), ("s390x", "s390-ccw-virtio"), ("ppc64le", "q35")])
def test_machine_type_follows_the_architecture(arch, machine):
    assert defaulted({"architecture": arch})["domain"]["machine"] == {"type": machine}


def test_existing_values_are_kept():
    spec = {"architecture": "arm64", "evictionStrategy": "LiveMigrate",
            "domain": {"machine": {"type": "pc"}, "cpu": {"sockets": 2}, "memory": {"guest": "1Gi"}}}
    out = defaulted(spec)
    assert out["domain"]["machine"] == {"type": "pc"} and out["domain"]["cpu"] == {"sockets": 2}
    assert out["evictionStrategy"] == "LiveMigrate" and out["domain"]["memory"] == {"guest": "1Gi"}


@pytest.mark.parametrize("resources, sockets, guest", [
    ({"limits": {"cpu": "3", "memory": "2Gi"}}, 3, "2Gi"),
    ({"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"memory": "2Gi"}}, 1, "1Gi"),
    ({"requests": {"cpu": "2"}}, 2, None),
])
def test_topology_and_memory_come_from_resources(resources, sockets, guest):
    out = defaulted({"domain": {"resources": resources}})
    assert out["domain"]["cpu"] == {"sockets": sockets, "cores": 1, "threads": 1}
    assert out["domain"]["memory"].get("guest") == guest


def test_cpu_limit_is_copied_to_requests():
    out = defaulted({"domain": {"resources": {"limits": {"cpu": "2"}}}})
    assert out["domain"]["resources"] == {"limits": {"cpu": "2"}, "requests": {"cpu": "2"}}


def test_guest_memory_from_hugepages():
    out = defaulted({"domain": {"memory": {"hugepages": {"pageSize": "1Gi"}}}})
    assert out["domain"]["memory"] == {"hugepages": {"pageSize": "1Gi"}, "guest": "1Gi"}


def test_partial_topology_is_not_completed():
    assert defaulted({"domain": {"cpu": {"cores": 2}}})["domain"]["cpu"] == {"cores": 2}


def test_non_default_cpu_request_unless_dedicated():
    settings = ClusterSettings(cpu_request="250m")
    assert defaulted({}, settings)["domain"]["resources"] == {"requests": {"cpu": "250m"}}
    dedicated = defaulted({"domain": {"cpu": {"dedicatedCpuPlacement": True}}}, settings)
    assert "resources" not in dedicated["domain"]


@pytest.mark.parametrize("image, policy", [
    ("quay.io/containerdisks/fedora:latest", "Always"),
    ("quay.io/containerdisks/fedora", "Always"),
    ("quay.io/containerdisks/fedora:41", "IfNotPresent"),
    ("quay.io/x@sha256:abc", "IfNotPresent"),
])
def test_image_pull_policy(image, policy):
    spec = defaulted({"volumes": [{"name": "v", "containerDisk": {"image": image}}]})
    assert spec["volumes"][0]["containerDisk"]["imagePullPolicy"] == policy


def test_explicit_pull_policy_is_kept():
    spec = defaulted({"volumes": [{"name": "v", "containerDisk": {"image": "x", "imagePullPolicy": "Never"}}]})
    assert spec["volumes"][0]["containerDisk"]["imagePullPolicy"] == "Never"


def test_default_volume_disks_skip_disks_and_filesystems():
    spec = {"volumes": [{"name": "a"}, {"name": "b"}, {"name": "c"}],
            "domain": {"devices": {"disks": [{"name": "a", "cdrom": {}}], "filesystems": [{"name": "b"}]}}}
    set_default_volume_disks(spec)
    assert spec["domain"]["devices"]["disks"] == [{"name": "a", "cdrom": {}}, {"name": "c"}]


def test_default_network_interface_rules():
    spec = {"domain": {"devices": {"autoattachPodInterface": False}}}
    set_default_network_interface(spec, DEFAULT_SETTINGS)
    assert "networks" not in spec
    spec = {"networks": [{"name": "x", "multus": {}}]}
    set_default_network_interface(spec, DEFAULT_SETTINGS)
    assert "domain" not in spec
    spec = {}
    set_default_network_interface(spec, ClusterSettings(default_network_binding="masquerade"))
    assert spec["domain"]["devices"]["interfaces"] == [{"name": "default", "masquerade": {}}]
    with pytest.raises(ExpandError, match="bridge interface is not enabled in kubevirt-config"):
        set_default_network_interface({}, ClusterSettings(permit_bridge_on_pod_network=False))
    with pytest.raises(ExpandError, match="slirp interface is deprecated as of v1.3"):
        set_default_network_interface({}, ClusterSettings(default_network_binding="slirp"))


def test_eviction_strategy_from_settings():
    assert defaulted({}, ClusterSettings(eviction_strategy="LiveMigrate"))["evictionStrategy"] == "LiveMigrate"
    assert "evictionStrategy" not in defaulted({}, ClusterSettings(eviction_strategy=None))
