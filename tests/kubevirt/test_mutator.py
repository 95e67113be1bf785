"""The VM mutator's instancetype stage (instancetype_webhook.kubevirt.mutator): upstream's answers in the public cases
(`expectedInfer`, `expectedMutate`, and `expected` after the stage), plus the stage's own rules, and the
UPDATE-only matcher check (compares the new matchers with `oldVm`; a CREATE control is answered without it)."""
from __future__ import annotations

import copy

import pytest

from instancetype_webhook.conformance.engine import verdict_answer
from instancetype_webhook.kubevirt.mutator import mutate_vm
from instancetype_webhook.kubevirt.source import InMemorySource
from tests.kit.corpus_checks import mutate_answer as answer
from tests.kit.shared_data import conformance_cases

STAGE_CASES = [c for c in conformance_cases() if "expectedInfer" in c or "expectedMutate" in c]
CASES = [case for case in conformance_cases() if "expectedMutate" in case]


def test_the_public_set_has_stage_cases():
    assert sum("expectedInfer" in c for c in STAGE_CASES) >= 13


PREF = {"kind": "VirtualMachineClusterPreference", "metadata": {"name": "p"},
        "spec": {"preferredArchitecture": "arm64", "machine": {"preferredMachineType": "virt"},
                 "volumes": {"preferredStorageClassName": "fast"}}}


def test_named_preference_writes_arch_machine_and_storage_class():
    vm = {"metadata": {"name": "v", "namespace": "ns"}, "spec": {
        "preference": {"name": "p"}, "template": {"spec": {"domain": {}}},
        "dataVolumeTemplates": [{"metadata": {"name": "d"}, "spec": {"storage": {}}}]}}
    out = mutate_vm(vm, source=InMemorySource([PREF])).vm
    assert out["spec"]["template"]["spec"]["architecture"] == "arm64"
    assert out["spec"]["template"]["spec"]["domain"]["machine"] == {"type": "virt"}
    assert out["spec"]["dataVolumeTemplates"][0]["spec"]["storage"] == {"storageClassName": "fast"}
    matched = mutate_vm(vm, source=InMemorySource([PREF])).matched
    assert matched is vm  # nothing inferred: the VM before the preference's submission-time values


@pytest.mark.parametrize("preference",
                         [{"name": "missing"}, {"name": "p", "kind": "bogus"}, {"name": "p", "revisionName": "gone"}])
def test_a_preference_that_does_not_resolve_is_no_preference_here(preference):
    vm = {"metadata": {"name": "v"}, "spec": {"preference": preference, "template": {"spec": {"domain": {}}}}}
    mutation = mutate_vm(vm, source=InMemorySource([PREF]))
    assert mutation.verdict.allowed and mutation.vm is vm


def test_request_namespace_is_used_when_the_vm_has_none():
    pvc = {"kind": "PersistentVolumeClaim",
           "metadata": {"name": "disk", "namespace": "team",
                        "labels": {"instancetype.kubevirt.io/default-instancetype": "x"}}}
    vm = {"metadata": {"name": "v"}, "spec": {"instancetype": {"inferFromVolume": "root"}, "template": {"spec": {
        "volumes": [{"name": "root", "persistentVolumeClaim": {"claimName": "disk"}}]}}}}
    assert not mutate_vm(vm, source=InMemorySource([pvc])).verdict.allowed
    mutation = mutate_vm(vm, source=InMemorySource([pvc]), namespace="team")
    assert mutation.vm["spec"]["instancetype"] == {"name": "x"}
    assert "namespace" not in mutation.vm["metadata"]  # looked up there, not written
    assert [i.to_dict() for i in mutation.inferred] == [
        {"volume": "root", "kind": "PersistentVolumeClaim", "namespace": "team", "name": "disk"}]


def test_inference_failure_is_a_400_with_the_message():
    vm = {"metadata": {"name": "v", "namespace": "n"}, "spec": {"instancetype": {"inferFromVolume": "root"},
                                                              "template": {"spec": {"volumes": []}}}}
    mutation = mutate_vm(vm)
    assert mutation.vm is None
    assert verdict_answer(mutation.verdict) == {"allowed": False, "code": 400,
                                                "message": "unable to find volume root to infer defaults"}


# -- the VM mutating webhook's answer (`expectedMutate`): UPDATE vs CREATE ------------------------------
def test_the_update_cases_are_there():
    assert len(CASES) >= 11 and any(c["input"].get("operation") == "UPDATE" for c in CASES)


def test_the_same_vm_is_refused_as_an_update_and_allowed_as_a_create():
    case = next(c for c in CASES if c["name"] == "update.preference.name-changed-revision-kept")
    assert not answer(case)["allowed"]
    create = copy.deepcopy(case)
    create["input"].pop("operation")
    assert answer(create) == {"allowed": True}
