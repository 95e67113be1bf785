"""app/kubevirt/resize.py: the hand-written path, refusals that name both values, which UPDATEs resize."""
from __future__ import annotations

import copy

import orjson
import pytest

from app.kubevirt.expand import expand
from app.kubevirt.imprint import PROVENANCE_KEY, imprint_from_patch
from app.kubevirt.resize import matchers_changed, resize
from app.patch import make_patch
from app.sources.catalog import load_catalog

CATALOG = load_catalog(None, default_namespace="apps")
SEVEN = {  # written flat by hand: 7 CPUs, 14Gi
    "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "metadata": {"name": "seven", "namespace": "apps"},
    "spec": {"runStrategy": "Halted", "template": {"spec": {
        "domain": {"cpu": {"sockets": 7, "cores": 1, "threads": 1, "model": "host-passthrough"},
                   "memory": {"guest": "14Gi"}, "resources": {"requests": {"memory": "14Gi"}},
                   "devices": {"disks": [{"name": "rootdisk", "disk": {"bus": "virtio"}}]}},
        "volumes": [{"name": "rootdisk", "containerDisk": {"image": "quay.io/containerdisks/fedora:41"}}]}}},
}


PLAIN = {**SEVEN, "spec": {**SEVEN["spec"], "template": {"spec": {
    "domain": {"devices": {}}, "volumes": SEVEN["spec"]["template"]["spec"]["volumes"]}}}}


def _named(vm: dict, instancetype: str | None = None, preference: str | None = None) -> dict:
    out = copy.deepcopy(vm)
    if instancetype:
        out["spec"]["instancetype"] = {"name": instancetype}
    if preference:
        out["spec"]["preference"] = {"name": preference}
    return out


def _flattened(vm: dict) -> dict:
    """`vm` flattened, with a provenance annotation holding its imprint (as /mutate stores it)."""
    flat = expand(vm, CATALOG)
    record = {"instancetype": {"name": vm["spec"]["instancetype"]["name"]}, **imprint_from_patch(vm, flat, make_patch(vm, flat))}
    flat["metadata"] = {**flat["metadata"], "annotations": {PROVENANCE_KEY: orjson.dumps(record).decode()}}
    return flat


def test_hand_written_vm_gets_the_new_size_and_a_warning_per_replaced_value() -> None:
    result = resize(_named(SEVEN, "cx1.2xlarge"), CATALOG)
    verdict, flat, error = result.checked
    assert verdict.allowed and error is None
    domain = flat["spec"]["template"]["spec"]["domain"]
    assert domain["cpu"]["sockets"] == 8 and domain["cpu"]["dedicatedCpuPlacement"] is True
    assert domain["cpu"]["model"] == "host-passthrough", "cx1 sets no model: the owner's stays"
    assert domain["memory"] == {"guest": "16Gi", "hugepages": {"pageSize": "2Mi"}}
    assert "requests" not in domain["resources"]
    assert result.warnings == [
        "cx1.2xlarge replaced hand-written cpu.sockets 7 -> 8",
        "cx1.2xlarge replaced hand-written memory.guest 14Gi -> 16Gi",
        "cx1.2xlarge replaced hand-written resources.requests.memory 14Gi -> (unset)",
    ]
    assert [r.field for r in result.replaced][:2] == ["spec.template.spec.domain.cpu.sockets",
                                                      "spec.template.spec.domain.cpu.cores"]
    assert flat["spec"]["template"]["spec"]["volumes"] == [{"name": "rootdisk", "containerDisk": {
        "image": "quay.io/containerdisks/fedora:41", "imagePullPolicy": "IfNotPresent"}}]
    assert SEVEN["spec"]["template"]["spec"]["domain"]["cpu"]["sockets"] == 7, "the input is not changed"


def test_hand_written_resize_can_be_turned_off() -> None:
    result = resize(_named(SEVEN, "cx1.2xlarge"), CATALOG, handwritten=False)
    verdict, flat, error = result.checked
    assert not verdict.allowed and flat is None and error.kind == "conflict"
    assert verdict.message == ", ".join(
        f"VM field(s) spec.template.spec.domain.{p} conflicts with selected instance type"
        for p in ("cpu.sockets", "cpu.cores", "cpu.threads", "memory.guest"))
    assert result.warnings == [] and result.replaced == []


def test_a_hand_edited_owned_field_is_refused_naming_both_values() -> None:
    flat = _flattened(_named(PLAIN, "u1.medium"))
    flat["spec"]["template"]["spec"]["domain"]["cpu"]["sockets"] = 3
    verdict, new_flat, error = resize(_named(flat, "u1.2xlarge"), CATALOG).checked
    assert not verdict.allowed and new_flat is None
    cause = verdict.causes[0]
    assert cause.reason == "FieldValueInvalid" and cause.field == "spec.template.spec.domain.cpu.sockets"
    assert cause.message == ("VM field(s) spec.template.spec.domain.cpu.sockets conflicts with selected instance type: "
                             "3 was set by hand, u1.medium had set 1")
    assert len(verdict.causes) == 1 and error.causes == verdict.causes


def test_provenance_of_the_stored_object_is_used_when_the_update_dropped_it() -> None:
    stored = _flattened(_named(PLAIN, "u1.medium"))
    update = _named(stored, "u1.2xlarge")
    del update["metadata"]["annotations"]
    verdict, flat, _ = resize(update, CATALOG, old_vm=stored).checked
    assert verdict.allowed and flat == expand(_named(PLAIN, "u1.2xlarge"), CATALOG)


@pytest.mark.parametrize("new, old, changed", [
    ({"instancetype": {"name": "u1.large"}}, {}, True),
    ({"instancetype": {"name": "u1.large"}}, {"instancetype": {"name": "u1.large"}}, False),
    ({"instancetype": {"name": "u1.large", "kind": "VirtualMachineClusterInstancetype"}},
     {"instancetype": {"name": "u1.large"}}, False),
    ({"instancetype": {"name": "u1.large", "kind": "virtualmachineclusterinstancetypes"}},
     {"instancetype": {"name": "u1.large", "kind": "VirtualMachineClusterInstancetype"}}, False),
    ({"instancetype": {"name": "u1.large", "kind": "VirtualMachineInstancetype"}},
     {"instancetype": {"name": "u1.large"}}, True),
    ({"instancetype": {"name": "u1.large"}, "preference": {"name": "fedora"}},
     {"instancetype": {"name": "u1.large"}}, True),
    ({"instancetype": {"inferFromVolume": "rootdisk"}}, {}, False),
    ({}, {"instancetype": {"name": "u1.large"}}, False),
])
def test_which_updates_resize(new: dict, old: dict, changed: bool) -> None:
    assert matchers_changed({"spec": new}, {"spec": old}) is changed
