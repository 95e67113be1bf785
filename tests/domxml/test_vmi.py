"""The VMI virt-controller creates from a VM (domxml/vmi.py): metadata, uid and the firmware UUID."""
from __future__ import annotations

import pytest

from instancetype_webhook.domxml import DomainError, vmi_from_vm
from instancetype_webhook.domxml.vmi import firmware_uuid

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
