"""The matchers under their failure policies (instancetype_webhook.kubevirt.infer.matchers)."""
from __future__ import annotations

import copy

import pytest

from instancetype_webhook.kubevirt.infer import InferenceError, infer_matchers, needs_inference
from instancetype_webhook.kubevirt.source import InMemorySource
from tests.kit.builders import vm as build_vm

NS = "vms"
LABELLED = {"kind": "PersistentVolumeClaim", "metadata": {"name": "disk", "namespace": NS, "labels": {
    "instancetype.kubevirt.io/default-instancetype": "it-a",
    "instancetype.kubevirt.io/default-preference": "pref-a",
    "instancetype.kubevirt.io/default-preference-kind": "VirtualMachinePreference"}}}
UNLABELLED = {"kind": "PersistentVolumeClaim", "metadata": {"name": "disk", "namespace": NS}}


def vm(instancetype=None, preference=None, memory=True) -> dict:
    return build_vm("v", NS, typed=False, instancetype=instancetype, preference=preference,
                    domain={"devices": {}, **({"memory": {"guest": "1Gi"}} if memory else {})},
                    volumes=[{"name": "root", "persistentVolumeClaim": {"claimName": "disk"}},
                             {"name": "cd", "containerDisk": {"image": "x"}}])


def run(the_vm, objects=(LABELLED,)):
    return infer_matchers(the_vm, NS, InMemorySource(list(objects), default_namespace=NS))


IGNORE = {"inferFromVolumeFailurePolicy": "Ignore"}
REJECT = {"inferFromVolumeFailurePolicy": "Reject"}

# (id, instancetype matcher, preference matcher, objects, expected instancetype, expected preference, memory kept)
CASES = [
    ("both inferred", {"inferFromVolume": "root"}, {"inferFromVolume": "root"}, (LABELLED,),
     {"name": "it-a"}, {"name": "pref-a", "kind": "VirtualMachinePreference"}, True),
    ("reject keeps memory", {"inferFromVolume": "root", **REJECT}, None, (LABELLED,), {"name": "it-a"}, None, True),
    ("ignore success clears memory", {"inferFromVolume": "root", **IGNORE}, None, (LABELLED,), {"name": "it-a"}, None,
     False),
    ("preference ignore does not clear memory", None, {"inferFromVolume": "root", **IGNORE}, (LABELLED,),
     None, {"name": "pref-a", "kind": "VirtualMachinePreference"}, True),
    ("ignore: missing label removes the matcher", {"inferFromVolume": "root", **IGNORE}, {"name": "p"}, (UNLABELLED,),
     None, {"name": "p"}, True),
    ("ignore: unsupported volume removes the matcher", {"inferFromVolume": "cd", **IGNORE},
     {"inferFromVolume": "root"}, (LABELLED,), None, {"name": "pref-a", "kind": "VirtualMachinePreference"}, True),
    ("named matchers untouched", {"name": "n", "kind": "virtualmachineinstancetype", "revisionName": "r"}, None, (),
     {"name": "n", "kind": "virtualmachineinstancetype", "revisionName": "r"}, None, True),
]


@pytest.mark.parametrize("it,pref,objects,want_it,want_pref,memory", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_policies(it, pref, objects, want_it, want_pref, memory):
    before = vm(it, pref)
    pristine = copy.deepcopy(before)
    result = run(before, objects)
    assert before == pristine  # the input is never changed
    spec = result.vm["spec"]
    assert spec.get("instancetype") == want_it
    assert spec.get("preference") == want_pref
    assert ("memory" in spec["template"]["spec"]["domain"]) is memory
    assert spec["template"]["spec"]["volumes"] is before["spec"]["template"]["spec"]["volumes"]  # shared, not copied


@pytest.mark.parametrize("policy", [None, "Reject", "Ignore"])
def test_missing_pvc_is_never_ignored(policy):
    matcher = {"inferFromVolume": "root", **({"inferFromVolumeFailurePolicy": policy} if policy else {})}
    with pytest.raises(InferenceError, match='persistentvolumeclaims "disk" not found'):
        run(vm(matcher), ())


@pytest.mark.parametrize("policy", [None, "Reject"])
def test_missing_label_under_reject(policy):
    matcher = {"inferFromVolume": "root", **({"inferFromVolumeFailurePolicy": policy} if policy else {})}
    with pytest.raises(InferenceError, match="unable to find required instancetype.kubevirt.io/default-instancetype"):
        run(vm(matcher), (UNLABELLED,))


def test_instancetype_failure_stops_before_the_preference():
    with pytest.raises(InferenceError, match="default-instancetype label"):
        run(vm({"inferFromVolume": "root"}, {"inferFromVolume": "nope"}), (UNLABELLED,))


def test_inferred_records_volume_and_object():
    result = run(vm({"inferFromVolume": "root"}, {"inferFromVolume": "root"}))
    assert [(i.matcher, i.to_dict()) for i in result.inferred] == [
        ("instancetype", {"volume": "root", "kind": "PersistentVolumeClaim", "namespace": NS, "name": "disk"}),
        ("preference", {"volume": "root", "kind": "PersistentVolumeClaim", "namespace": NS, "name": "disk"})]
    assert result.warnings == []


def test_ignored_failure_is_a_warning():
    result = run(vm({"inferFromVolume": "root", **IGNORE}), (UNLABELLED,))
    assert result.inferred == ()
    assert len(result.warnings) == 1
    assert "spec.instancetype: inferFromVolume root failed and was ignored" in result.warnings[0]


def test_each_object_is_read_once_per_request():
    calls = []

    class Counting(InMemorySource):
        def get(self, kind, name, namespace=None):
            calls.append((kind, name, namespace))
            return super().get(kind, name, namespace)

    infer_matchers(vm({"inferFromVolume": "root"}, {"inferFromVolume": "root"}), NS, Counting([LABELLED]))
    assert calls == [("PersistentVolumeClaim", "disk", NS)]


def test_nothing_to_infer_returns_the_same_object():
    the_vm = vm({"name": "x"})
    assert run(the_vm).vm is the_vm
    assert not needs_inference(the_vm)
    assert not needs_inference({"spec": "junk"})
