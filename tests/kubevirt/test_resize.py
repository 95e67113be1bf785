"""instancetype_webhook/kubevirt/resize.py: the hand-written path, refusals that name both values, which UPDATEs
resize."""
from __future__ import annotations

import copy

import orjson
import pytest

from instancetype_webhook.kubevirt.expand import expand
from instancetype_webhook.kubevirt.imprint import PROVENANCE_KEY, imprint_from_patch
from instancetype_webhook.kubevirt.resize import matchers_changed, resize
from instancetype_webhook.patch import make_patch
from instancetype_webhook.sources.catalog import load_catalog

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
    record = {"instancetype": {"name": vm["spec"]["instancetype"]["name"]},
              **imprint_from_patch(vm, flat, make_patch(vm, flat))}
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


# ---- property: whatever the owner did to a flat VM, a resize answers and loses none of the owner's fields ----

from hypothesis import HealthCheck, given, settings  # noqa: E402  (the property section's own imports)
from hypothesis import strategies as st  # noqa: E402  (the property section's own imports)

from instancetype_webhook.kubevirt.imprint import read_provenance  # noqa: E402  (the property section's own imports)

WITH_PREFERENCE = _flattened(_named(PLAIN, "u1.medium", "fedora"))
SIZES = ["u1.2xlarge", "cx1.large", "m1.large", "o1.small", "rt1.large", "d1.medium", "u1.colossal"]
PREFERENCES = [None, "fedora", "windows.11.virtio", "rhel.9", "nope"]
VALUES = st.one_of(st.none(), st.booleans(), st.integers(-3, 70), st.sampled_from(["", "4Gi", "virtio", "x"]),
                   st.dictionaries(st.sampled_from(["a", "bus", "guest"]), st.integers(0, 3), max_size=2),
                   st.lists(st.integers(0, 3), max_size=2))
# dotted places in the flat VM (dict paths) where an owner could plant or change something
PLACES = ["spec", "spec.template.spec", "spec.template.spec.domain", "spec.template.spec.domain.cpu",
          "spec.template.spec.domain.memory", "spec.template.spec.domain.devices", "spec.template.metadata",
          "metadata", "spec.template.spec.domain.features", "spec.template.spec.domain.firmware"]
KEYS = ["sockets", "cores", "guest", "hugepages", "model", "bus", "rng", "acpi", "maxSockets", "x-owner",
        "dedicatedCpuPlacement", "requests", "annotations"]


def _node(vm: dict, dotted_path: str):
    node = vm
    for key in dotted_path.split("."):
        node = node.get(key) if isinstance(node, dict) else None
    return node if isinstance(node, dict) else None


@st.composite
def edited_flat_vms(draw):
    vm = copy.deepcopy(WITH_PREFERENCE)
    planted = []
    for _ in range(draw(st.integers(0, 5))):
        place, key, value = draw(st.sampled_from(PLACES)), draw(st.sampled_from(KEYS)), draw(VALUES)
        node = _node(vm, place)
        if node is None:
            continue
        if draw(st.booleans()):
            node.pop(key, None)
        else:
            node[key] = value
    for i in range(draw(st.integers(0, 3))):  # unknown fields of the owner's: must survive a resize
        place = draw(st.sampled_from(PLACES))
        node = _node(vm, place)
        if node is not None:
            node[f"x-planted-{i}"] = i
            planted.append((place, f"x-planted-{i}"))
    if draw(st.booleans()):
        vm["spec"]["template"]["spec"]["volumes"].reverse()
    if draw(st.integers(0, 5)) == 0 and isinstance(vm["metadata"].get("annotations"), dict):  # a damaged annotation
        vm["metadata"]["annotations"][PROVENANCE_KEY] = draw(st.sampled_from(
            ["", "{", "[]", '{"set": 3}', '{"set": {"domain/cpu": 1}, "replaced": {"domain/cpu/x": 5}}']))
    return vm, planted


@settings(max_examples=300, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(edited_flat_vms(), st.sampled_from(SIZES), st.sampled_from(PREFERENCES), st.booleans())
def test_resize_always_answers_and_keeps_the_owners_fields(edited, size, preference, handwritten) -> None:
    vm, planted = edited
    before = copy.deepcopy(vm)
    result = resize(_named(vm, size, preference), CATALOG, handwritten=handwritten)
    verdict, flat, error = result.checked
    assert vm == before, "the input is never changed"
    assert all(len(w) <= 120 for w in result.warnings)
    if flat is None:
        assert not verdict.allowed or error is not None
        assert (verdict.message or (error and error.message))
        return
    assert "instancetype" not in flat["spec"] and "preference" not in flat["spec"]
    for place, key in planted:
        node = _node(flat, place)
        assert node is not None and node.get(key) == int(key.rsplit("-", 1)[1]), (place, key)
    assert read_provenance(vm) is None or flat["metadata"] == vm["metadata"]


def test_a_changed_or_deleted_recorded_object_is_named() -> None:
    from instancetype_webhook.kubevirt.source import InMemorySource

    mine = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineInstancetype",
            "metadata": {"name": "mine", "namespace": "apps", "uid": "u-1", "generation": 1},
            "spec": {"cpu": {"guest": 2}, "memory": {"guest": "2Gi"}}}
    vm = _named(PLAIN, None, "fedora")
    vm["spec"]["instancetype"] = {"kind": "VirtualMachineInstancetype", "name": "mine"}
    flat = expand(vm, InMemorySource([mine, *[CATALOG.get("VirtualMachineClusterPreference", "fedora")]], "apps"))
    record = {"instancetype": {"kind": "VirtualMachineInstancetype", "name": "mine", "uid": "u-1", "generation": 1},
              "preference": {"kind": "VirtualMachineClusterPreference", "name": "fedora"},
              **imprint_from_patch(vm, flat, make_patch(vm, flat))}
    flat["metadata"] = {**flat["metadata"], "annotations": {PROVENANCE_KEY: orjson.dumps(record).decode()}}
    changed = copy.deepcopy(mine)
    changed["metadata"]["generation"] = 2
    changed["spec"]["cpu"]["guest"] = 4
    preference = CATALOG.get("VirtualMachineClusterPreference", "rhel.9")
    result = resize(_named(flat, None, "rhel.9"), InMemorySource([changed, preference], "apps"))
    assert result.checked.flat["spec"]["template"]["spec"]["domain"]["cpu"]["sockets"] == 4
    assert result.warnings == ["the instance type mine changed since this VM was flattened (generation 1 -> 2): "
                               "its current spec applies"]
    gone = resize(_named(flat, None, "rhel.9"), InMemorySource([preference], "apps"))
    assert gone.checked.error.kind == "notFound"
    assert gone.warnings == ["the instance type mine this VM was flattened with is gone: name one to resize"]


def test_a_hand_set_preference_value_is_kept_with_a_warning() -> None:
    flat = _flattened(_named(PLAIN, "u1.large", "fedora"))
    flat["spec"]["template"]["spec"]["domain"]["devices"]["disks"][0]["disk"]["bus"] = "sata"
    result = resize(_named(flat, None, "windows.11.virtio"), CATALOG)
    assert result.checked.verdict.allowed
    disks = result.checked.flat["spec"]["template"]["spec"]["domain"]["devices"]["disks"]
    assert disks[0] == {"name": "rootdisk", "disk": {"bus": "sata"}}
    assert result.warnings == ["kept hand-edited devices.disks[rootdisk].disk.bus sata (flattening had set virtio)"]
    cpu = result.checked.flat["spec"]["template"]["spec"]["domain"]["cpu"]
    assert (cpu["sockets"], cpu["cores"]) == (1, 2)  # u1.large under the windows preference's cores topology
