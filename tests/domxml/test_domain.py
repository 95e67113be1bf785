"""<domain> as a whole (domxml/domain.py): the domain type, the architecture check, the element order."""
from __future__ import annotations

import pytest
from lxml import etree

from instancetype_webhook.domxml import DomainError, LauncherContext, render_domain
from instancetype_webhook.domxml.domain import build_domain, domain_type
from instancetype_webhook.domxml.vmi_defaults import apply_vmi_defaults
from tests.kit.domxml import conversion, make_vmi


def test_render_rejects_other_architectures_and_missing_kvm():
    from instancetype_webhook.domxml import LauncherContext

    with pytest.raises(DomainError, match="arm64"):
        render_domain(make_vmi(architecture="arm64"), LauncherContext(architecture="amd64"))

    xml = render_domain(make_vmi(), LauncherContext(hypervisor_device_available=False))
    assert xml.startswith("<domain") and 'type="qemu"' in xml.splitlines()[0]
    with pytest.raises(DomainError, match="/dev/kvm"):
        render_domain(make_vmi(), LauncherContext(hypervisor_device_available=False, allow_emulation=False))


def build(domain: dict | None = None, ctx: LauncherContext | None = None, **kwargs: object):
    return build_domain(apply_vmi_defaults(make_vmi(domain, **kwargs)), ctx or LauncherContext())


def tags(root) -> list[str]:
    return [etree.QName(child).localname for child in root]


def test_domain_type_is_kvm_else_emulated_qemu_else_refused():
    assert domain_type(conversion(make_vmi())) == "kvm"
    assert domain_type(conversion(make_vmi(), LauncherContext(hypervisor_device_available=False))) == "qemu"
    # with /dev/kvm present, forbidding emulation changes nothing
    assert domain_type(conversion(make_vmi(), LauncherContext(allow_emulation=False))) == "kvm"
    with pytest.raises(DomainError, match="/dev/kvm"):
        domain_type(conversion(make_vmi(), LauncherContext(hypervisor_device_available=False, allow_emulation=False)))


def test_top_level_elements_in_upstreams_order():
    root = build()
    assert root.get("type") == "kvm" and root.find("name").text == "ns1_vm1"
    assert tags(root) == ["name", "memory", "os", "sysinfo", "devices", "metadata", "features", "cpu", "vcpu",
                          "vcpus"]
    rich = build({"memory": {"guest": "2Gi", "hugepages": {"pageSize": "1Gi"}}, "rebootPolicy": "Terminate",
                  "clock": {"utc": {}}, "ioThreadsPolicy": "shared",
                  "cpu": {"sockets": 2, "dedicatedCpuPlacement": True, "numa": {"guestMappingPassthrough": {}}}},
                 volumes=[{"name": "d", "emptyDisk": {"capacity": "1Gi"}}],
                 annotations={"kubevirt.io/ignitiondata": '{"ignition": {}}'})
    # (no <maxMemory>: NUMA passthrough rules memory hotplug out)
    assert tags(rich) == ["name", "memory", "memoryBacking", "os", "sysinfo", "devices", "clock",
                          "commandline", "metadata", "features", "cpu", "vcpu", "vcpus", "cputune", "numatune",
                          "iothreads", "on_reboot"]
    assert rich.find("on_reboot").text == "destroy"
    # NUMA passthrough replaces the synthetic hugepages cell and pins the pages to the host cell
    assert len(rich.findall("cpu/numa")) == 1 and rich.find("cpu/numa/cell").get("unit") == "b"
    assert rich.find("memoryBacking/hugepages/page").get("nodeset") == "0"


def test_metadata_holds_an_empty_kubevirt_uid():
    metadata = build().find("metadata")
    (kubevirt,) = metadata
    assert kubevirt.tag == "{http://kubevirt.io}kubevirt"
    assert [child.tag for child in kubevirt] == ["{http://kubevirt.io}uid"] and kubevirt[0].text is None


def test_a_vmi_without_a_name_is_refused():
    vmi = apply_vmi_defaults(make_vmi())
    del vmi["metadata"]["name"]
    with pytest.raises(DomainError, match="no metadata.name"):
        build_domain(vmi, LauncherContext())
    assert build({"rebootPolicy": "Restart"}).find("on_reboot") is None
