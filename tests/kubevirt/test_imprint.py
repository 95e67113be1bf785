"""instancetype_webhook/kubevirt/imprint.py: what flattening wrote, recorded from the patch, and taken out again."""
from __future__ import annotations

import copy
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from instancetype_webhook.kubevirt.expand import expand
from instancetype_webhook.kubevirt.imprint import (
    PROVENANCE_KEY,
    dotted,
    imprint_from_patch,
    read_provenance,
    strip,
    value_at,
)
from instancetype_webhook.patch import make_patch
from instancetype_webhook.sources.catalog import load_catalog
from tests.kit.corpus_checks import same_bytes

CATALOG = load_catalog(None, default_namespace="apps")
VM = {
    "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "metadata": {"name": "web", "namespace": "apps"},
    "spec": {"runStrategy": "Always", "instancetype": {"name": "u1.medium"}, "preference": {"name": "fedora"},
             "template": {"spec": {"domain": {"devices": {}}, "volumes": [
                 {"name": "rootdisk", "containerDisk": {"image": "quay.io/containerdisks/fedora:41"}},
                 {"name": "data", "containerDisk": {"image": "quay.io/containerdisks/data:1"}}]}}},
}


def _flat(vm: dict, source=CATALOG) -> tuple[dict, dict]:
    flat = expand(vm, source)
    return flat, imprint_from_patch(vm, flat, make_patch(vm, flat))


def _unreferenced(vm: dict) -> dict:
    out = copy.deepcopy(vm)
    out["spec"].pop("instancetype", None)
    out["spec"].pop("preference", None)
    return out


def test_records_created_nodes_with_named_list_keys() -> None:
    flat, imprint = _flat(VM)
    assert set(imprint) == {"set"}
    created = imprint["set"]
    assert created["domain/cpu"] == {"cores": 1, "sockets": 1, "threads": 1}
    assert created["domain/memory"] == {"guest": "4Gi"}
    assert created["volumes/name=data/containerDisk/imagePullPolicy"] == "IfNotPresent"
    assert created["/spec/template/metadata"] == {"annotations": {"vm.kubevirt.io/os": "linux"}}
    assert not any(k.startswith(("/status", "/metadata", "/spec/instancetype")) for k in created)


def test_strip_gives_back_the_vm_as_written() -> None:
    flat, imprint = _flat(VM)
    stripped, edits = strip(flat, imprint)
    assert edits == []
    assert stripped["spec"] == _unreferenced(VM)["spec"]
    assert flat == expand(VM, CATALOG), "strip never changes its input"


def test_strip_survives_reordered_lists() -> None:
    flat, imprint = _flat(VM)
    moved = copy.deepcopy(flat)
    moved["spec"]["template"]["spec"]["volumes"].reverse()
    stripped, edits = strip(moved, imprint)
    assert edits == []
    volumes = stripped["spec"]["template"]["spec"]["volumes"]
    assert [v["name"] for v in volumes] == ["data", "rootdisk"]
    assert all("imagePullPolicy" not in v["containerDisk"] for v in volumes)


def test_a_hand_edit_stays_and_is_reported() -> None:
    flat, imprint = _flat(VM)
    edited = copy.deepcopy(flat)
    domain = edited["spec"]["template"]["spec"]["domain"]
    domain["cpu"]["sockets"] = 4
    domain["cpu"]["model"] = "host-passthrough"  # a key of the owner's own: not an edit, kept
    domain["devices"]["disks"][0]["disk"]["bus"] = "sata"
    stripped, edits = strip(edited, imprint)
    assert {(e.field, e.recorded, e.current) for e in edits} == {
        ("spec.template.spec.domain.cpu.sockets", 1, 4),
        ("spec.template.spec.domain.devices.disks[rootdisk].disk.bus", "virtio", "sata"),
    }
    domain = stripped["spec"]["template"]["spec"]["domain"]
    assert domain["cpu"] == {"sockets": 4, "model": "host-passthrough"}
    assert domain["devices"]["disks"] == [{"name": "rootdisk", "disk": {"bus": "sata"}}]
    assert value_at(stripped, "domain/cpu/sockets") == 4


def test_replaced_values_are_put_back() -> None:
    vm = copy.deepcopy(VM)
    vm["spec"]["instancetype"] = {"name": "cx1.large"}
    vm["spec"]["template"]["spec"]["domain"]["cpu"] = {"maxSockets": 16}
    flat, imprint = _flat(vm)
    assert flat["spec"]["template"]["spec"]["domain"]["cpu"]["maxSockets"] == 2
    assert imprint["replaced"] == {"domain/cpu/maxSockets": [16, 2]}
    stripped, edits = strip(flat, imprint)
    assert edits == [] and stripped["spec"] == _unreferenced(vm)["spec"]
    edited = copy.deepcopy(flat)
    edited["spec"]["template"]["spec"]["domain"]["cpu"]["maxSockets"] = 6
    stripped, edits = strip(edited, imprint)
    assert [(e.field, e.recorded, e.current) for e in edits] == [("spec.template.spec.domain.cpu.maxSockets", 2, 6)]
    assert stripped["spec"]["template"]["spec"]["domain"]["cpu"]["maxSockets"] == 6


def test_read_provenance_and_dotted() -> None:
    assert read_provenance({"metadata": {"annotations": {PROVENANCE_KEY: json.dumps({"set": {}})}}}) == {"set": {}}
    for bad in ("not json", "[1]", 7):
        assert read_provenance({"metadata": {"annotations": {PROVENANCE_KEY: bad}}}) is None
    assert read_provenance({"metadata": None}) is None and read_provenance(None) is None
    assert (dotted("domain/devices/gpus/name=gpu1/deviceName")
            == "spec.template.spec.domain.devices.gpus[gpu1].deviceName")
    assert dotted("/spec/dataVolumeTemplates/0/spec/storage") == "spec.dataVolumeTemplates[0].spec.storage"


def test_strip_touches_nothing_outside_the_spec_and_never_the_matchers() -> None:
    vm = {"metadata": {"labels": {"a": "1"}}, "status": {"ready": True},
          "spec": {"instancetype": {"name": "u1.large"}, "template": {"spec": {"domain": {"devices": {}}}}}}
    imprint = {"set": {"/metadata/labels": {"a": "1"}, "/status": {"ready": True},
                       "/spec/instancetype": {"name": "u1.large"},
                       "": 1, "/": 2}, "replaced": {"/metadata/labels/a": ["0", "1"], "x": "not a pair"}}
    stripped, edits = strip(vm, imprint)
    assert stripped == vm and edits == []
    assert vm["metadata"] == {"labels": {"a": "1"}}


# ---- patch_and_imprint: the patch and the imprint in one walk, identical to the two steps ----------

# Small alphabets so that two random trees share most of their structure: keys that need escaping, digit
# keys, the skipped prefixes and the template spec; list elements that are named (duplicates too) or not.
_KEYS = st.sampled_from(["spec", "template", "metadata", "status", "statusX", "instancetype", "preference",
                         "domain", "cpu", "name", "a/b", "x~y", "0", "12", "volumes", "disks"])
_SCALARS = st.one_of(st.none(), st.booleans(), st.sampled_from([0, 1, 2, 1.0, "", "a", "b", "virtio"]))


def _element(children: st.SearchStrategy) -> st.SearchStrategy:
    named = st.fixed_dictionaries({"name": st.sampled_from(["a", "b", "c", "", "d/e", 3])},
                                  optional={"disk": children, "bus": _SCALARS})
    return st.one_of(named, children)


_TREES = st.recursive(_SCALARS, lambda children: st.one_of(
    st.dictionaries(_KEYS, children, max_size=4), st.lists(_element(children), max_size=4)), max_leaves=14)
_VMS = st.fixed_dictionaries({}, optional={
    "metadata": _TREES, "status": _TREES,
    "spec": st.fixed_dictionaries({}, optional={"instancetype": _TREES, "preference": _TREES, "x": _TREES,
                                                "template": st.fixed_dictionaries({}, optional={
                                                    "metadata": _TREES, "spec": _TREES})})})


@given(received=_VMS, flat=_VMS)
@settings(max_examples=400, deadline=None)
def test_one_walk_equals_patch_then_imprint(received: dict, flat: dict) -> None:
    same_bytes(received, flat)


@given(received=_TREES, flat=_TREES)
@settings(max_examples=300, deadline=None)
def test_one_walk_equals_patch_then_imprint_on_any_json(received, flat) -> None:
    same_bytes(received, flat)
