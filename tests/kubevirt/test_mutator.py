"""The VM mutator's instancetype stage (instancetype_webhook.kubevirt.mutator): upstream's answers in the public cases
(`expectedInfer`, `expectedMutate`, and `expected` after the stage), plus the stage's own rules, and the
UPDATE-only matcher check (compares the new matchers with `oldVm`; a CREATE control is answered without it)."""
from __future__ import annotations

import copy

import pytest

from instancetype_webhook.conformance.engine import verdict_answer
from instancetype_webhook.kubevirt.mutator import mutate_vm
from instancetype_webhook.kubevirt.releases import INFER_FROM_SNAPSHOTS
from instancetype_webhook.kubevirt.source import InMemorySource
from tests.kit.corpus_checks import mutate_answer as answer
from tests.kit.releases import settings_as, sides
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


# -- releases: C4, inferFromVolume through VolumeSnapshot sources from v1.9 (releases.INFER_FROM_SNAPSHOTS) ----

SNAP_NS = "vms"
SNAP_LABELS = {"instancetype.kubevirt.io/default-instancetype": "from-snapshot"}
SNAPSHOT = {"kind": "VolumeSnapshot", "metadata": {"name": "snap", "namespace": SNAP_NS, "labels": SNAP_LABELS}}
SNAPSHOT_SOURCE = {"snapshot": {"name": "snap", "namespace": SNAP_NS}}
DATA_SOURCE = {"kind": "DataSource", "metadata": {"name": "golden", "namespace": SNAP_NS},
               "spec": {"source": SNAPSHOT_SOURCE}}
UNSUPPORTED_DV_SOURCE = "unable to infer defaults from DataVolumeSpec as DataVolumeSource is not supported"
OLD_DS_MESSAGE = "unable to infer defaults from DataSource that doesn't provide DataVolumeSourcePVC"
# (id, dataVolumeTemplates, objects besides the VolumeSnapshot, v1.8.4's ignorable error)
SNAPSHOT_CHAINS = [
    ("DataVolume", None,
     [{"kind": "DataVolume", "metadata": {"name": "root-dv", "namespace": SNAP_NS},
       "spec": {"source": SNAPSHOT_SOURCE}}], UNSUPPORTED_DV_SOURCE),
    ("DataVolumeTemplate", [{"metadata": {"name": "root-dv"}, "spec": {"source": SNAPSHOT_SOURCE}}], [],
     UNSUPPORTED_DV_SOURCE),
    ("DataSource", [{"metadata": {"name": "root-dv"},
                     "spec": {"sourceRef": {"kind": "DataSource", "name": "golden"}}}], [DATA_SOURCE], OLD_DS_MESSAGE),
]


def _snapshot_vm(templates, policy=None):
    matcher = {"inferFromVolume": "root", **({"inferFromVolumeFailurePolicy": policy} if policy else {})}
    spec = {"instancetype": matcher, "template": {"spec": {"domain": {}, "volumes": [
        {"name": "root", "dataVolume": {"name": "root-dv"}}]}}}
    if templates is not None:
        spec["dataVolumeTemplates"] = templates
    return {"metadata": {"name": "v", "namespace": SNAP_NS}, "spec": spec}


@pytest.mark.parametrize(("templates", "objects", "old_message"), [c[1:] for c in SNAPSHOT_CHAINS],
                         ids=[c[0] for c in SNAPSHOT_CHAINS])
def test_inference_follows_a_volume_snapshot_from_v1_9_only(templates, objects, old_message):
    before, after = sides(INFER_FROM_SNAPSHOTS)
    source = InMemorySource([*objects, SNAPSHOT], default_namespace=SNAP_NS)
    found = mutate_vm(_snapshot_vm(templates), source=source, settings=settings_as(after.name))
    assert found.verdict.allowed and found.vm["spec"]["instancetype"] == {"name": "from-snapshot"}
    assert [i.to_dict()["kind"] for i in found.inferred] == ["VolumeSnapshot"]
    refused = mutate_vm(_snapshot_vm(templates), source=source, settings=settings_as(before.name))
    assert (refused.verdict.allowed, refused.verdict.code, refused.verdict.message) == (False, 400, old_message)
    ignored = mutate_vm(_snapshot_vm(templates, "Ignore"), source=source, settings=settings_as(before.name))
    assert ignored.verdict.allowed and "instancetype" not in ignored.vm["spec"]  # v1.8: ignorable, matcher removed
    assert old_message in ignored.verdict.warnings[0]


@pytest.mark.parametrize(("templates", "objects"), [c[1:3] for c in SNAPSHOT_CHAINS],
                         ids=[c[0] for c in SNAPSHOT_CHAINS])
def test_a_missing_volume_snapshot_is_refused_even_under_ignore_from_v1_9_only(templates, objects):
    before, after = sides(INFER_FROM_SNAPSHOTS)
    source = InMemorySource(list(objects), default_namespace=SNAP_NS)  # no VolumeSnapshot
    refused = mutate_vm(_snapshot_vm(templates, "Ignore"), source=source, settings=settings_as(after.name))
    assert (refused.verdict.allowed, refused.verdict.message) == (
        False, 'volumesnapshots.snapshot.storage.k8s.io "snap" not found')
    ignored = mutate_vm(_snapshot_vm(templates, "Ignore"), source=source, settings=settings_as(before.name))
    assert ignored.verdict.allowed  # v1.8 never looks the VolumeSnapshot up


def test_the_old_datasource_message_is_not_main_s():
    source = InMemorySource([{**DATA_SOURCE, "spec": {"source": {}}}], default_namespace=SNAP_NS)
    answers = {r: mutate_vm(_snapshot_vm(SNAPSHOT_CHAINS[2][1]), source=source, settings=settings_as(r)).verdict.message
               for r in ("v1.8.4", "v1.9.0", "main")}
    assert answers == {"v1.8.4": OLD_DS_MESSAGE, "v1.9.0": OLD_DS_MESSAGE + " or DataVolumeSourceSnapshot",
                       "main": OLD_DS_MESSAGE + " or DataVolumeSourceSnapshot"}
