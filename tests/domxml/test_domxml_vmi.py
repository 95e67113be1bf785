"""VMI from a VM, the VMI create defaults, and the canonical XML comparison."""
from __future__ import annotations

import pytest

from instancetype_webhook.domxml import DomainError, canonical_xml, render_domain, vmi_from_vm, xml_equal
from instancetype_webhook.domxml.vmi import firmware_uuid
from instancetype_webhook.domxml.vmi_defaults import apply_vmi_defaults
from tests.kit.domxml import make_vmi

VM = {
    "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
    "metadata": {"name": "web", "namespace": "prod", "labels": {"vm-label": "x"}},
    "spec": {"template": {"metadata": {"labels": {"app": "web"}, "annotations": {"a": "b"}},
                          "spec": {"domain": {"devices": {"autoattachInputDevice": True},
                                              "memory": {"guest": "1Gi"}}}}},
}


def test_vmi_from_vm_copies_template_metadata_and_sets_firmware_uuid():
    vmi = vmi_from_vm(VM, uid="u-1")
    assert vmi["metadata"] == {"name": "web", "namespace": "prod", "uid": "u-1", "labels": {"app": "web"},
                               "annotations": {"a": "b"}}
    assert vmi["spec"]["domain"]["firmware"] == {"uuid": firmware_uuid("web")}
    import uuid

    assert uuid.UUID(firmware_uuid("web")).version == 5  # name-based, like virt-controller's legacy UUID
    assert firmware_uuid("web") != firmware_uuid("web2")
    assert vmi["spec"]["domain"]["devices"]["inputs"] == [{"name": "default-0"}]
    assert "firmware" not in VM["spec"]["template"]["spec"]["domain"]  # the VM is not modified


def test_vmi_from_vm_keeps_a_given_firmware_uuid_and_a_stable_uid():
    vm = {**VM, "spec": {"template": {"spec": {"domain": {"firmware": {"uuid": "fixed"}}}}}}
    first, second = vmi_from_vm(vm), vmi_from_vm(vm)
    assert first["spec"]["domain"]["firmware"]["uuid"] == "fixed"
    assert first["metadata"]["uid"] == second["metadata"]["uid"]


@pytest.mark.parametrize("bad", [{}, {"spec": {}}, {"metadata": {}, "spec": {"template": {"spec": {}}}}])
def test_vmi_from_vm_rejects_non_vms(bad):
    with pytest.raises(DomainError):
        vmi_from_vm(bad)


def test_defaults_topology_buses_hotplug_and_network():
    vmi = make_vmi({"resources": {"limits": {"cpu": "3", "memory": "2Gi"}}, "memory": {},
                    "devices": {"disks": [{"name": "c", "cdrom": {}}], "watchdog": {"name": "w"}}},
                   volumes=[{"name": "c", "containerDisk": {"image": "x"}}, {"name": "extra", "emptyDisk": {}}])
    spec = apply_vmi_defaults(vmi)["spec"]
    domain = spec["domain"]
    assert domain["cpu"] == {"sockets": 3, "cores": 1, "threads": 1, "model": "host-model", "maxSockets": 12}
    assert domain["memory"] == {"guest": "2Gi", "maxGuest": str(8 * 2**30)}
    assert domain["resources"]["requests"] == {"cpu": "3"}
    assert domain["devices"]["disks"] == [{"name": "c", "cdrom": {"bus": "sata", "readOnly": True, "tray": "closed"}},
                                          {"name": "extra", "disk": {"bus": "sata"}}]
    assert domain["devices"]["watchdog"] == {"name": "w", "i6300esb": {"action": "reset"}}
    assert domain["devices"]["interfaces"] == [{"name": "default", "bridge": {}}]
    assert spec["networks"] == [{"name": "default", "pod": {}}]
    assert domain["machine"] == {"type": "q35"} and spec["architecture"] == "amd64"


@pytest.mark.parametrize("memory, cpu, expected", [
    ({"guest": "1536Mi"}, {}, str(6 * 2**30)),
    ({"guest": "1Gi", "hugepages": {"pageSize": "1Gi"}}, {}, str(4 * 2**30)),
    ({"guest": "1500Mi", "hugepages": {"pageSize": "1Gi"}}, {}, None),  # not 1Gi aligned
    ({"guest": "1025Mi"}, {}, None),  # not 2Mi aligned
    ({"guest": "2Gi"}, {"realtime": {}}, None),
    ({"guest": "512Mi"}, {}, None),
])
def test_memory_hotplug_rules(memory, cpu, expected):
    domain = apply_vmi_defaults(make_vmi({"memory": memory, "cpu": cpu}))["spec"]["domain"]
    assert domain["memory"].get("maxGuest") == expected


def test_cpu_hotplug_caps_at_512_vcpus():
    domain = apply_vmi_defaults(make_vmi({"cpu": {"sockets": 2, "cores": 100, "threads": 1}}))["spec"]["domain"]
    assert domain["cpu"]["maxSockets"] == 5


def test_no_default_interface_when_pod_interface_is_off():
    spec = apply_vmi_defaults(make_vmi({"devices": {"autoattachPodInterface": False}}))["spec"]
    assert "interfaces" not in spec["domain"]["devices"] and "networks" not in spec


def test_render_rejects_other_architectures_and_missing_kvm():
    from instancetype_webhook.domxml import LauncherContext

    with pytest.raises(DomainError, match="arm64"):
        render_domain(make_vmi(architecture="arm64"), LauncherContext(architecture="amd64"))

    xml = render_domain(make_vmi(), LauncherContext(hypervisor_device_available=False))
    assert xml.startswith("<domain") and 'type="qemu"' in xml.splitlines()[0]
    with pytest.raises(DomainError, match="/dev/kvm"):
        render_domain(make_vmi(), LauncherContext(hypervisor_device_available=False, allow_emulation=False))


def test_render_reports_malformed_vmis_as_domain_errors():
    with pytest.raises(DomainError):
        render_domain({"spec": "nope"})
    with pytest.raises(DomainError):
        render_domain(make_vmi({"memory": {"guest": "lots"}}))


def test_canonical_xml_ignores_attribute_order_whitespace_and_empty_forms():
    a = '<a x="1" y="2">\n  <b></b>\n  <c>t</c>\n</a>'
    b = '<a y="2" x="1"><b/><c>t</c></a>'
    assert canonical_xml(a) == canonical_xml(b)
    assert xml_equal(a, b) == (True, "")
    equal, where = xml_equal(a, '<a y="2" x="1"><c>t</c><b/></a>')
    assert not equal and where.startswith("/a/b")
    equal, where = xml_equal(a, '<a y="2" x="1"><b/><c>u</c></a>')
    assert not equal and "text" in where
    with pytest.raises(DomainError):
        canonical_xml("<a>")


def test_topology_without_sockets_gets_no_cpu_hotplug():
    domain = apply_vmi_defaults(make_vmi({"cpu": {"cores": 4}}))["spec"]["domain"]
    assert "maxSockets" not in domain["cpu"]
    xml = render_domain(make_vmi({"cpu": {"cores": 4}}))
    assert '<topology sockets="1" cores="4" threads="1"/>' in xml and "<vcpus>" not in xml


def test_vmi_without_any_memory_converts_as_zero_bytes():
    vmi = make_vmi({"memory": {}})
    assert '<memory unit="b">0</memory>' in render_domain(vmi)
