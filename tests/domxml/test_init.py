"""The package's entry points (domxml/__init__.py): render_domain and its checks of the VMI's shape."""
from __future__ import annotations

import copy

import pytest
from lxml import etree

from instancetype_webhook.domxml import (
    DomainError,
    LauncherContext,
    domain_config,
    render_domain,
    render_domain_element,
)
from tests.kit.domxml import make_vmi


def test_render_reports_malformed_vmis_as_domain_errors():
    with pytest.raises(DomainError):
        render_domain({"spec": "nope"})
    with pytest.raises(DomainError):
        render_domain(make_vmi({"memory": {"guest": "lots"}}))


@pytest.mark.parametrize("bad, message", [
    ([], "not a VirtualMachineInstance"),
    ({"kind": "VirtualMachineInstance"}, "not a VirtualMachineInstance"),
    ({"spec": {"domain": []}}, "spec.domain must be an object"),
])
def test_the_vmis_shape_is_checked_first(bad, message):
    with pytest.raises(DomainError, match=message):
        render_domain_element(bad)


def test_render_domain_is_the_element_two_space_indented():
    vmi = make_vmi()
    text = render_domain(vmi)
    assert text == etree.tostring(render_domain_element(vmi), pretty_print=True, encoding="unicode")
    assert text.splitlines()[1] == "  <name>ns1_vm1</name>" and text.endswith("</domain>\n")


def test_the_vmi_is_not_modified():
    vmi = make_vmi({"devices": {"disks": [{"name": "d"}]}}, volumes=[{"name": "d", "emptyDisk": {"capacity": "1Gi"}}])
    before = copy.deepcopy(vmi)
    render_domain(vmi)
    assert vmi == before


def test_env_joins_the_context_and_config_shapes_it():
    vmi = make_vmi({"devices": {"hostDevices": [{"name": "h", "deviceName": "intel.com/qat"}]}})
    with pytest.raises(DomainError, match="no device of resource intel.com/qat"):  # no device-plugin variable
        render_domain_element(vmi)
    root = render_domain_element(vmi, LauncherContext(env={"OTHER": "x"}),
                                 env={"PCI_RESOURCE_INTEL_COM_QAT": "0000:3b:01.2"})
    assert root.find("devices/hostdev/source/address").get("bus") == "0x3b"
    config = domain_config({"smbios": {"manufacturer": "ACME"}})
    entries = render_domain_element(make_vmi(), config=config).findall("sysinfo/system/entry")
    assert {e.get("name"): e.text for e in entries}["manufacturer"] == "ACME"
    assert {e.get("name"): e.text for e in render_domain_element(make_vmi()).findall("sysinfo/system/entry")}[
        "manufacturer"] == "KubeVirt"
