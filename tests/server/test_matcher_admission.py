"""Matcher validation (spec 3.5) on /mutate, over the real server with real TLS.

Upstream's VM mutating webhook validates the instance type and preference matchers before anything
else, under every policy (UPDATE compares with the old object); its validating webhook does not, so
/validate keeps answering from the instancetype checks alone (a nameless matcher is a lookup that
does not resolve: admitted with a warning).
"""
from __future__ import annotations

import copy

import httpx
import pytest

from instancetype_webhook.admission.policy import POLICY_KEY
from tests.kit.builders import review
from tests.kit.server import serve
from tests.server.test_server import VM, patch_of, post

EITHER = "Either Name or InferFromVolume should be provided within the InstancetypeMatcher"
RENAMED = "the Matcher Name has been updated without updating the RevisionName"


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory):
    env = {"INSTANCETYPE_WEBHOOK_POLICY": "expand", "INSTANCETYPE_WEBHOOK_ALLOW_VM_POLICY": "true"}
    with serve(tmp_path_factory.mktemp("matchers"), env=env) as srv, srv.client() as c:
        yield c


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
def test_nameless_matcher_is_refused_under_every_policy(client: httpx.Client, policy: str | None):
    vm = vm_with(policy, instancetype={"kind": "VirtualMachineInstancetype"})
    assert denied(post(client, "/mutate", review(vm))) == [
        {"reason": "FieldValueNotFound", "field": "spec.instancetype", "message": EITHER}]


def test_infer_with_name_and_bad_failure_policy(client: httpx.Client):
    vm = vm_with(preference={"name": "fedora", "inferFromVolume": "rootdisk", "inferFromVolumeFailurePolicy": "Maybe"})
    causes = denied(post(client, "/mutate", review(vm)))
    assert [(c["reason"], c["field"]) for c in causes] == [
        ("FieldValueNotSupported", "spec.preference.name"),
        ("FieldValueInvalid", "spec.preference.inferFromVolumeFailurePolicy")]
    assert "Invalid value 'Maybe' for InferFromVolumeFailurePolicy" in causes[1]["message"]


def test_update_renaming_a_pinned_matcher_is_refused(client: httpx.Client):
    old = vm_with(instancetype={"name": "u1.medium", "revisionName": "pinned-r1"})
    new = vm_with(instancetype={"name": "u1.large", "revisionName": "pinned-r1"})
    assert denied(post(client, "/mutate", review(new, "UPDATE", old=old))) == [
        {"reason": "FieldValueInvalid", "field": "spec.instancetype.revisionName", "message": RENAMED}]
    # the same object on CREATE (no old object to compare with) passes the matcher check; under
    # `reference` it is then admitted untouched
    new_ref = vm_with("reference", instancetype={"name": "u1.large", "revisionName": "pinned-r1"})
    resp = post(client, "/mutate", review(new_ref))
    assert resp["allowed"] and "patch" not in resp


def test_update_that_moves_the_revision_too_is_flattened(client: httpx.Client):
    old = vm_with(instancetype={"name": "u1.medium", "revisionName": "pinned-r1"})
    new = vm_with(instancetype={"name": "u1.large"})
    resp = post(client, "/mutate", review(new, "UPDATE", old=old))
    assert resp["allowed"] and any(op["path"] == "/spec/instancetype" for op in patch_of(resp))


def test_validate_does_not_check_matchers_as_upstream(client: httpx.Client):
    vm = vm_with(instancetype={"kind": "VirtualMachineInstancetype"})
    del vm["spec"]["preference"]
    resp = post(client, "/validate", review(vm))
    assert resp["allowed"] and any("instance type not checked" in w for w in resp["warnings"])


def test_vm_being_deleted_is_not_checked(client: httpx.Client):
    vm = vm_with(instancetype={"kind": "VirtualMachineInstancetype"})
    vm["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    resp = post(client, "/mutate", review(vm, "UPDATE", old=vm))
    assert resp["allowed"] and "patch" not in resp
