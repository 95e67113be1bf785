"""A case's `input` as the library takes it (conformance/cases.py): the source holding every input list, the
namespace, the VM and the stored VM of an UPDATE, the release answered as, whether the mutator goes first."""
import copy
import json

from instancetype_webhook.conformance import cases as inputs
from instancetype_webhook.kubevirt.causes import Verdict
from instancetype_webhook.kubevirt.releases import MAIN_PROFILE, resolve
from tests.kit.shared_data import CONFORMANCE

PASSING = "requirements.memory-unmet"
DENIED = "update.preference.name-changed-revision-kept"  # the mutator denies this UPDATE (a matcher check)
PREFERENCE = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineClusterPreference",
              "metadata": {"name": "p"}, "spec": {"devices": {"preferredVideoType": "vga",
                                                              "preferredDiskBus": "sata"}}}


def load(name: str) -> dict:
    return json.loads((CONFORMANCE / f"{name}.json").read_text())


def test_case_source_holds_every_input_list():
    case_input = {"vm": {"metadata": {"namespace": "ns"}}, **{key: [{"metadata": {"name": f"o-{key}"}}]
                                                              for key in inputs.INPUT_KINDS}}
    source = inputs.case_source(case_input)
    for key, kind in inputs.INPUT_KINDS.items():
        if kind == "ControllerRevision":
            assert source.get_revision(f"o-{key}", "ns") is not None
        else:
            assert source.get(kind, f"o-{key}", "ns") == {"metadata": {"name": f"o-{key}"}, "kind": kind}


def test_old_vm_only_for_an_update():
    case = load(DENIED)
    assert inputs.case_old_vm(case) == case["input"]["oldVm"]
    create = copy.deepcopy(case)
    create["input"]["operation"] = "CREATE"
    assert inputs.case_old_vm(create) is None


def test_an_update_without_an_old_vm_is_a_create():
    case = load(DENIED)
    del case["input"]["oldVm"]
    assert inputs.case_old_vm(case) is None


def test_a_listed_objects_own_kind_is_kept():
    source = inputs.case_source({"vm": {}, "instancetypes": [
        {"kind": "VirtualMachineClusterInstancetype", "metadata": {"name": "odd"}}]})
    assert source.get("VirtualMachineClusterInstancetype", "odd") is not None
    assert source.get("VirtualMachineInstancetype", "odd", "default") is None


def test_the_namespace_is_the_inputs_then_the_vms_then_default():
    assert inputs.case_namespace({"namespace": "given", "vm": {"metadata": {"namespace": "vm-ns"}}}) == "given"
    assert inputs.case_namespace({"vm": {"metadata": {"namespace": "vm-ns"}}}) == "vm-ns"
    assert inputs.case_namespace({"vm": {"metadata": {}}}) == "default"
    assert inputs.case_namespace({}) == "default"


def test_the_case_vm_is_a_copy_in_the_inputs_namespace_when_it_names_none():
    case = {"input": {"namespace": "ns", "vm": {"metadata": {"name": "vm"}, "spec": {}}}}
    vm = inputs.case_vm(case)
    assert vm["metadata"] == {"name": "vm", "namespace": "ns"}
    vm["spec"]["changed"] = True
    assert case["input"]["vm"] == {"metadata": {"name": "vm"}, "spec": {}}  # the case is never changed
    named = {"input": {"namespace": "ns", "vm": {"metadata": {"name": "vm", "namespace": "own"}}}}
    assert inputs.case_vm(named)["metadata"]["namespace"] == "own"
    assert "namespace" not in inputs.case_vm({"input": {"vm": {"metadata": {"name": "vm"}}}})["metadata"]


def test_answering_as_a_release_for_the_block_only():
    assert inputs.case_release() == MAIN_PROFILE
    v18 = resolve("v1.8.4")
    with inputs.answering_as(v18) as release:
        assert release == v18 and inputs.case_release() == v18
        assert inputs.case_settings({}).release == v18
        with inputs.answering_as(resolve("v1.9.0")):
            assert inputs.case_release() == resolve("v1.9.0")
        assert inputs.case_release() == v18
    assert inputs.case_release() == MAIN_PROFILE
    assert inputs.case_settings({}).release == MAIN_PROFILE


def test_inputs_are_pruned_to_the_release_answered_as():
    assert inputs.as_release(PREFERENCE)["spec"]["devices"]["preferredVideoType"] == "vga"
    with inputs.answering_as(resolve("v1.8.4")):
        devices = inputs.as_release(PREFERENCE)["spec"]["devices"]
        stored = inputs.case_source({"vm": {}, "clusterPreferences": [PREFERENCE]}).get(
            "VirtualMachineClusterPreference", "p")
    assert devices == {"preferredDiskBus": "sata"}  # preferredVideoType came with v1.9
    assert stored["spec"]["devices"] == {"preferredDiskBus": "sata"}


def test_the_mutator_goes_first_only_with_its_members():
    assert inputs.goes_through_mutator({"expectedInfer": {}})
    assert inputs.goes_through_mutator({"expectedMutate": {}})
    assert not inputs.goes_through_mutator({"expected": {}, "expectedValidate": {}})


def test_subject_vm_is_the_case_vm_the_mutated_vm_or_the_denial():
    passing = load(PASSING)
    assert not inputs.goes_through_mutator(passing)
    assert inputs.subject_vm(passing) == inputs.case_vm(passing)
    denied = inputs.subject_vm(load(DENIED))
    assert isinstance(denied, Verdict) and not denied.allowed
    allowed = {**load(PASSING), "expectedMutate": {"allowed": True}}
    assert inputs.case_mutation(allowed).verdict.allowed
    assert inputs.subject_vm(allowed) == inputs.case_mutation(allowed).vm
