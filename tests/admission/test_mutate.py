"""admission/mutate.py: the /mutate decision for one review, in process (no HTTP).

- The reference policy and the VM policy annotation (ignored unless the admin allows overrides).
- `expand`: a VM is stored flat with a targeted JSONPatch and the provenance annotation; a VM captured under
  `reference` keeps its references on UPDATE.
- Matcher validation (spec 3.5) comes first under every policy (UPDATE compares with `oldObject`).
- inferFromVolume against an offline catalogue holding CDI's labelled examples (PVC + DataSource
  `os-images/fedora`): `expand` stores the VM as if written with the names (but for the provenance, which
  records the inference); `reference` patches nothing and denies as virt-api; `Ignore` removes a matcher whose
  label is missing, but a missing DataSource is still denied.
- Flattening a VM whose preference shapes an auto-attached device warns about it; --preserve-guest keeps it.
"""
from __future__ import annotations

import copy
import json

import jsonpatch
import pytest

from instancetype_webhook.admission.context import ReviewContext
from instancetype_webhook.admission.mutate import mutate
from instancetype_webhook.admission.policy import POLICY_KEY, PROVENANCE_KEY
from instancetype_webhook.kubevirt.source import InMemorySource
from tests.kit.admission import (
    INFERRING,
    VM,
    WARNING,
    WINDOWS_VM,
    catalog_context,
    inferring_catalog,
    patch_of,
    post,
    stored,
)
from tests.kit.builders import review
from tests.kit.releases import settings_as

EXPAND = catalog_context("expand")


# --- policies (were tests/server/test_server.py) -----------------------------------------------------------

def test_expand_create_flattens_with_targeted_patch():
    resp = post(EXPAND, "/mutate", review(VM))
    assert resp["allowed"] and resp["patchType"] == "JSONPatch"
    ops = patch_of(resp)
    paths = {op["path"] for op in ops}
    assert "/spec" not in paths and "/metadata" not in paths
    assert {"op": "remove", "path": "/spec/instancetype"} in ops
    assert {"op": "remove", "path": "/spec/preference"} in ops
    # annotation keys are JSON-pointer escaped
    assert f"/metadata/annotations/{PROVENANCE_KEY.replace('/', '~1')}" in paths
    flat = jsonpatch.apply_patch(VM, ops, in_place=False)
    domain = flat["spec"]["template"]["spec"]["domain"]
    assert domain["cpu"]["sockets"] == 1 and domain["memory"]["guest"] == "4Gi"
    assert flat["spec"]["template"]["spec"]["volumes"][1] == VM["spec"]["template"]["spec"]["volumes"][1]
    assert list(flat["metadata"]["annotations"])[0] == "example.com/owner"
    prov = json.loads(flat["metadata"]["annotations"][PROVENANCE_KEY])
    assert prov["instancetype"] == {"kind": "VirtualMachineClusterInstancetype", "name": "u1.medium"} | {
        k: v for k, v in prov["instancetype"].items() if k in ("uid", "generation")}
    assert prov["preference"]["name"] == "fedora"
    # Calling again on the patched VM yields no patch.
    again = post(EXPAND, "/mutate", review(flat))
    assert again["allowed"] and "patch" not in again


def test_expand_update_keeps_a_vm_captured_under_reference():
    old = copy.deepcopy(VM)
    old["status"] = {"instancetypeRef": {"name": "u1.medium", "kind": "VirtualMachineClusterInstancetype",
                                         "controllerRevisionRef": {"name": "web-1-u1.medium-v1beta1-uid-1"}}}
    resp = post(EXPAND, "/mutate", review(VM, "UPDATE", old=old))
    assert resp["allowed"] and "patch" not in resp
    # Without a captured revision in the stored object, UPDATE expands.
    resp = post(EXPAND, "/mutate", review(VM, "UPDATE", old=copy.deepcopy(VM)))
    assert resp["allowed"] and patch_of(resp)


def test_vm_annotation_is_ignored_by_default_with_a_warning():
    """The cluster admin's policy holds: a VM owner cannot opt out."""
    vm = copy.deepcopy(VM)
    vm["metadata"]["annotations"][POLICY_KEY] = "reference"
    resp = post(EXPAND, "/mutate", review(vm))
    assert patch_of(resp)
    assert any(w.endswith("annotation ignored (VM overrides off): policy expand (cluster) applies")
               for w in resp["warnings"])


def test_vm_annotation_overrides_policy_when_the_admin_allows_it():
    ctx = catalog_context("expand", vm_policy_overrides=True)
    vm = copy.deepcopy(VM)
    vm["metadata"]["annotations"][POLICY_KEY] = "reference"
    resp = post(ctx, "/mutate", review(vm))
    assert resp["allowed"] and "patch" not in resp
    old = copy.deepcopy(VM)
    old["status"] = {"preferenceRef": {"name": "fedora", "controllerRevisionRef": {"name": "r"}}}
    vm["metadata"]["annotations"][POLICY_KEY] = "expandAll"
    assert patch_of(post(ctx, "/mutate", review(vm, "UPDATE", old=old)))
    vm["metadata"]["annotations"][POLICY_KEY] = "sometimes"
    resp = post(ctx, "/mutate", review(vm))
    assert patch_of(resp) and any("not a policy" in w for w in resp["warnings"])


def test_reference_policy_passes_vms_through():
    ctx = catalog_context("reference")
    resp = post(ctx, "/mutate", review(VM))
    assert resp == {"uid": resp["uid"], "allowed": True}
    vm = copy.deepcopy(VM)
    vm["metadata"]["annotations"][POLICY_KEY] = "expand"  # ignored: VM-level overrides are off
    resp = post(ctx, "/mutate", review(vm))
    assert "patch" not in resp and resp["warnings"][0].endswith("policy reference (cluster) applies")


def test_unrelated_kind_and_delete_are_allowed_untouched():
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "apps"}, "spec": {}}
    for path in ("/mutate", "/validate"):
        resp = post(EXPAND, path, review(pod, group="", kind="Pod"))
        assert resp == {"uid": resp["uid"], "allowed": True}
        resp = post(EXPAND, path, review(None, "DELETE", old=VM))
        assert resp["allowed"] and "patch" not in resp


def test_the_reply_says_what_became_of_the_review():
    """ReviewReply's outcome, kind, patch count and policy: what the log line and the metrics record."""
    reply = mutate(review(VM), EXPAND)
    assert (reply.allowed, reply.kind, reply.outcome, reply.policy) == (True, "VirtualMachine", "patched", "expand")
    assert reply.patch_ops == len(patch_of(json.loads(reply.body)["response"])) > 0
    kept = mutate(review(VM), catalog_context("reference"))
    assert (kept.outcome, kept.patch_ops, kept.policy) == ("allowed", 0, "reference")
    pod = mutate(review({"metadata": {"name": "p"}}, group="", kind="Pod"), EXPAND)
    assert (pod.outcome, pod.kind, pod.policy) == ("skipped", "Pod", "")
    missing = copy.deepcopy(VM)
    missing["spec"]["instancetype"] = {"name": "no-such-size"}
    denied = mutate(review(missing), EXPAND)
    assert (denied.allowed, denied.outcome, denied.patch_ops) == (False, "denied", 0)


# --- matcher validation (were tests/server/test_matcher_admission.py) ---------------------------------------

EITHER = "Either Name or InferFromVolume should be provided within the InstancetypeMatcher"
RENAMED = "the Matcher Name has been updated without updating the RevisionName"
MATCHERS = catalog_context("expand", vm_policy_overrides=True)


def vm_with(policy: str | None = None, **matchers: dict) -> dict:
    vm = copy.deepcopy(VM)
    vm["spec"].update(matchers)
    if policy:
        vm["metadata"]["annotations"][POLICY_KEY] = policy
    return vm


def denied(resp: dict) -> list[dict]:
    assert not resp["allowed"] and "patch" not in resp
    status = resp["status"]
    assert status["code"] == 422 and status["reason"] == "Invalid"
    assert status["message"] == ", ".join(c["message"] for c in status["details"]["causes"])
    return status["details"]["causes"]


@pytest.mark.parametrize("policy", [None, "reference", "expandAll"])
def test_nameless_matcher_is_refused_under_every_policy(policy: str | None):
    vm = vm_with(policy, instancetype={"kind": "VirtualMachineInstancetype"})
    assert denied(post(MATCHERS, "/mutate", review(vm))) == [
        {"reason": "FieldValueNotFound", "field": "spec.instancetype", "message": EITHER}]


def test_infer_with_name_and_bad_failure_policy():
    vm = vm_with(preference={"name": "fedora", "inferFromVolume": "rootdisk", "inferFromVolumeFailurePolicy": "Maybe"})
    causes = denied(post(MATCHERS, "/mutate", review(vm)))
    assert [(c["reason"], c["field"]) for c in causes] == [
        ("FieldValueNotSupported", "spec.preference.name"),
        ("FieldValueInvalid", "spec.preference.inferFromVolumeFailurePolicy")]
    assert "Invalid value 'Maybe' for InferFromVolumeFailurePolicy" in causes[1]["message"]


def test_update_renaming_a_pinned_matcher_is_refused():
    old = vm_with(instancetype={"name": "u1.medium", "revisionName": "pinned-r1"})
    new = vm_with(instancetype={"name": "u1.large", "revisionName": "pinned-r1"})
    assert denied(post(MATCHERS, "/mutate", review(new, "UPDATE", old=old))) == [
        {"reason": "FieldValueInvalid", "field": "spec.instancetype.revisionName", "message": RENAMED}]
    # the same object on CREATE (no old object to compare with) passes the matcher check; under
    # `reference` it is then admitted untouched
    new_ref = vm_with("reference", instancetype={"name": "u1.large", "revisionName": "pinned-r1"})
    resp = post(MATCHERS, "/mutate", review(new_ref))
    assert resp["allowed"] and "patch" not in resp


def test_update_that_moves_the_revision_too_is_flattened():
    old = vm_with(instancetype={"name": "u1.medium", "revisionName": "pinned-r1"})
    new = vm_with(instancetype={"name": "u1.large"})
    resp = post(MATCHERS, "/mutate", review(new, "UPDATE", old=old))
    assert resp["allowed"] and any(op["path"] == "/spec/instancetype" for op in patch_of(resp))


def test_vm_being_deleted_is_not_checked():
    vm = vm_with(instancetype={"kind": "VirtualMachineInstancetype"})
    vm["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    resp = post(MATCHERS, "/mutate", review(vm, "UPDATE", old=vm))
    assert resp["allowed"] and "patch" not in resp


# --- inferFromVolume (were tests/server/test_infer_admission.py) ---------------------------------------------

IGNORE = {"inferFromVolumeFailurePolicy": "Ignore"}


@pytest.fixture(scope="module")
def infer_ctx(tmp_path_factory: pytest.TempPathFactory) -> ReviewContext:
    return catalog_context("expand", inferring_catalog(tmp_path_factory.mktemp("infer")), vm_policy_overrides=True)


def without_provenance(vm: dict) -> tuple[dict, dict]:
    vm = copy.deepcopy(vm)
    value = json.loads(vm["metadata"]["annotations"].pop(PROVENANCE_KEY))
    if not vm["metadata"]["annotations"]:
        del vm["metadata"]["annotations"]
    return vm, value


def test_inferred_vm_is_stored_flat_like_the_vm_written_with_names(infer_ctx: ReviewContext):
    inferred, prov = without_provenance(stored(INFERRING, post(infer_ctx, "/mutate", review(INFERRING))))
    named = copy.deepcopy(INFERRING)
    named["spec"]["instancetype"], named["spec"]["preference"] = {"name": "u1.medium"}, {"name": "fedora"}
    by_name, _ = without_provenance(stored(named, post(infer_ctx, "/mutate", review(named))))
    assert inferred == by_name
    assert "instancetype" not in inferred["spec"]
    assert inferred["spec"]["template"]["spec"]["domain"]["memory"] == {"guest": "4Gi"}
    source = {"volume": "rootdisk", "kind": "DataSource", "namespace": "os-images", "name": "fedora"}
    assert prov["instancetype"]["name"] == "u1.medium" and prov["instancetype"]["inferredFrom"] == source
    assert prov["preference"]["name"] == "fedora" and prov["preference"]["inferredFrom"] == source


def test_reference_policy_patches_nothing_and_denies_as_virt_api(infer_ctx: ReviewContext):
    vm = copy.deepcopy(INFERRING)
    vm["metadata"]["annotations"] = {POLICY_KEY: "reference"}
    resp = post(infer_ctx, "/mutate", review(vm))
    assert resp["allowed"] and "patch" not in resp
    vm["spec"]["template"]["spec"]["volumes"][0] = {"name": "rootdisk", "persistentVolumeClaim": {"claimName": "plain"}}
    resp = post(infer_ctx, "/mutate", review(vm))
    assert not resp["allowed"] and "patch" not in resp
    assert resp["status"]["code"] == 400
    assert resp["status"]["message"] == ("unable to find required instancetype.kubevirt.io/default-instancetype "
                                         "label on the volume")


def test_missing_label_under_ignore_removes_the_matcher(infer_ctx: ReviewContext):
    vm = copy.deepcopy(INFERRING)
    vm["spec"]["instancetype"] = {"inferFromVolume": "plaindisk", **IGNORE}
    vm["spec"]["preference"] = {"name": "fedora"}
    vm["spec"]["template"]["spec"]["domain"]["memory"] = {"guest": "2Gi"}  # the fallback that stays
    vm["spec"]["template"]["spec"]["volumes"].append({"name": "plaindisk",
                                                      "persistentVolumeClaim": {"claimName": "plain"}})
    resp = post(infer_ctx, "/mutate", review(vm))
    flat, prov = without_provenance(stored(vm, resp))
    assert "instancetype" not in flat["spec"] and "instancetype" not in prov
    assert flat["spec"]["template"]["spec"]["domain"]["memory"] == {"guest": "2Gi"}
    assert any("inferFromVolume plaindisk failed and was ignored" in w for w in resp.get("warnings", []))


def test_missing_datasource_is_denied_even_under_ignore(infer_ctx: ReviewContext):
    vm = copy.deepcopy(INFERRING)
    vm["spec"]["instancetype"] = {"inferFromVolume": "rootdisk", **IGNORE}
    vm["spec"]["dataVolumeTemplates"][0]["spec"]["sourceRef"]["name"] = "centos"
    resp = post(infer_ctx, "/mutate", review(vm))
    assert not resp["allowed"] and resp["status"]["code"] == 400
    assert resp["status"]["message"] == 'datasources.cdi.kubevirt.io "centos" not found'


# --- the guest's auto-attached devices (were tests/server/test_preserve_guest.py) ----------------------------




def _mutate(ctx: ReviewContext, vm: dict) -> tuple[dict, list[str]]:
    answer = post(ctx, "/mutate", review(vm))
    return stored(vm, answer), answer.get("warnings", [])


def _inputs(flat: dict) -> list | None:
    return flat["spec"]["template"]["spec"]["domain"]["devices"].get("inputs")


def test_flattening_warns_and_preserve_guest_keeps_the_device():
    flat, warnings = _mutate(EXPAND, WINDOWS_VM)
    assert WARNING in warnings and _inputs(flat) is None  # upstream's flat VM
    preserving = catalog_context("expand", preserve_guest=True)
    flat, warnings = _mutate(preserving, WINDOWS_VM)
    assert WARNING not in warnings
    assert _inputs(flat) == [{"name": "default-0", "type": "tablet", "bus": "virtio"}]
    fedora = json.loads(json.dumps(WINDOWS_VM).replace("windows.11.virtio", "fedora"))
    assert _inputs(_mutate(preserving, fedora)[0]) is None  # nothing to keep: the flat VM is upstream's


def test_a_null_namespace_is_removed_once_and_the_patch_applies():
    """Found by the fuzz suite: the provenance's metadata patch and the flattening patch both removed
    `metadata.namespace: null`, so the API server could not apply the answer."""
    vm = {**WINDOWS_VM, "metadata": {"name": "win", "namespace": None}}
    answer = post(EXPAND, "/mutate", review(vm, namespace="demo"))
    assert answer["allowed"], answer
    flat = jsonpatch.apply_patch(vm, patch_of(answer), in_place=False)
    assert "namespace" not in flat["metadata"]
    assert "instancetype-webhook.kubevirt.io/expanded-from" in flat["metadata"]["annotations"]


# --- the lookups are made as the cluster's release ---------------------------------------------------------

def test_a_pinned_revision_the_releases_scheme_cannot_decode_is_refused_in_that_releases_words():
    revision = {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": {"name": "old", "namespace": "ns"},
                "data": {"apiVersion": "instancetype.kubevirt.io/v1alpha2", "kind": "VirtualMachinePreference",
                         "spec": {}}}
    vm = {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "metadata": {"name": "v", "namespace": "ns"},
          "spec": {"preference": {"name": "p", "revisionName": "old"},
                   "template": {"spec": {"domain": {"devices": {}}}}}}
    messages = {}
    for release in ("v1.7.4", "main"):
        ctx = ReviewContext(source=InMemorySource([revision]), policy="expand", cluster=settings_as(release))
        response = post(ctx, "/mutate", review(vm))
        assert not response["allowed"] and response["status"]["code"] == 400
        messages[release] = response["status"]["message"]
    assert messages["v1.7.4"].endswith('scheme "kubevirt.io/client-go/kubevirt/scheme/register.go:42"')
    assert messages["main"].endswith('scheme "kubevirt.io/client-go/kubevirt/scheme/register.go:44"')
