"""A VM rendered as it will be stored under a policy and started (domxml/stored.py), over the bundled
common-instancetypes catalogue: the auto-attached input device is where `reference` and the flat VM differ."""
from __future__ import annotations

import copy

import pytest
from lxml import etree

from instancetype_webhook.domxml import domain_config
from instancetype_webhook.domxml.stored import render_stored_vm, started_vmi
from instancetype_webhook.kubevirt.causes import ExpandError
from instancetype_webhook.sources.catalog import load_catalog
from tests.kit.builders import CONTAINER_DISK
from tests.kit.builders import vm as build_vm

SOURCE = load_catalog(default_namespace="demo")


def vm(preference: str | None = "windows.11.virtio", instancetype: str | None = "u1.medium", **spec) -> dict:
    return build_vm("win", "demo", run_strategy=None, instancetype=instancetype or None,
                    preference=preference or None, template=spec, volumes=[CONTAINER_DISK])


def parse(xml: str) -> etree._Element:
    return etree.fromstring(xml.encode())


def test_reference_gets_the_preferred_virtio_tablet_and_the_flat_vm_a_usb_one():
    """windows.11.virtio sets preferredAutoattachInputDevice and preferredInputBus virtio."""
    reference = parse(render_stored_vm(vm(), SOURCE, "reference", uid="u-1"))
    tablet = reference.find("devices/input")
    assert (tablet.get("bus"), tablet.get("model"), tablet.find("alias").get("name")) == ("virtio", "virtio",
                                                                                           "ua-default-0")
    assert reference.find("devices/controller[@type='usb']").get("model") == "none"
    for policy in ("expand", "expandAll"):
        flat = parse(render_stored_vm(vm(), SOURCE, policy, uid="u-1"))
        assert flat.find("devices/input").get("bus") == "usb" and flat.find("devices/input").get("model") is None
        assert flat.find("devices/controller[@type='usb']").get("model") == "qemu-xhci"
        assert flat.find("os/loader") is not None and flat.find("devices/tpm") is not None  # the rest is the same


def test_the_started_vmi_carries_default_0_in_both_cases():
    ref = started_vmi(vm(), SOURCE, flat=False)["spec"]["domain"]["devices"]["inputs"]
    flat = started_vmi(vm(), SOURCE, flat=True)["spec"]["domain"]["devices"]["inputs"]
    assert ref == [{"name": "default-0", "bus": "virtio", "type": "tablet"}]
    assert flat == [{"name": "default-0"}]  # bus and type come from the VMI defaults (usb tablet)


def test_a_vm_with_its_own_inputs_or_no_references_renders_the_same_under_every_policy():
    own = vm(domain={"devices": {"inputs": [{"name": "t", "type": "tablet", "bus": "usb"}]}})
    assert render_stored_vm(own, SOURCE, "reference") == render_stored_vm(own, SOURCE, "expand")
    plain = vm(preference=None, instancetype=None, domain={"memory": {"guest": "1Gi"},
                                                           "devices": {"autoattachInputDevice": True}})
    xml = render_stored_vm(plain, SOURCE, "reference")
    assert xml == render_stored_vm(plain, SOURCE, "expandAll") and 'alias name="ua-default-0"' in xml


def test_architecture_and_configuration_reach_the_domain():
    arm = parse(render_stored_vm(vm("fedora.arm64", "u1.large", architecture="arm64"), SOURCE, "expand"))
    assert arm.find("os/type").get("arch") == "aarch64" and arm.find("os/loader").text.startswith("/usr/share/AAVMF/")
    config = domain_config({"smbios": {"manufacturer": "ACME"}})
    smbios = parse(render_stored_vm(vm(), SOURCE, "reference", config))
    assert "ACME" in [e.text for e in smbios.findall("sysinfo/system/entry")]


def test_refusals():
    with pytest.raises(ValueError, match="unknown policy"):
        render_stored_vm(vm(), SOURCE, "flatten")
    with pytest.raises(ExpandError, match="not found"):
        render_stored_vm(vm(instancetype="nope.none"), SOURCE, "reference")


def test_the_vm_is_not_modified():
    original = vm()
    before = copy.deepcopy(original)
    render_stored_vm(original, SOURCE, "reference")
    render_stored_vm(original, SOURCE, "expand")
    assert original == before


def test_a_preference_that_turns_the_pod_interface_off_keeps_it_off_only_while_referenced():
    source = load_catalog(default_namespace="demo")
    source.add({"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineClusterPreference",
                "metadata": {"name": "no-pod"}, "spec": {"devices": {"preferredAutoattachPodInterface": False}}})
    reference = parse(render_stored_vm(vm("no-pod"), source, "reference"))
    flat = parse(render_stored_vm(vm("no-pod"), source, "expand"))
    assert reference.find("devices/interface") is None
    assert flat.find("devices/interface") is not None  # the expansion added it before the preference's flag
    own = vm("no-pod", domain={"devices": {"interfaces": [{"name": "default", "masquerade": {}}]}},
             networks=[{"name": "default", "pod": {}}])
    assert parse(render_stored_vm(own, source, "reference")).find("devices/interface") is not None
