"""admission/validate.py: the /validate decision in process. VM CREATE/UPDATE through the instancetype checks
(references that do not resolve are admitted with a warning of at most 120 characters, as upstream; the
matchers are not checked, as upstream's validating webhook does not), the four instance type and preference
kinds through object admission, anything else (and any other operation) allowed untouched."""
from __future__ import annotations

import copy

import pytest

from instancetype_webhook.admission.validate import validate
from tests.kit.admission import VM, catalog_context, post
from tests.kit.builders import review

EXPAND = catalog_context("expand")


def test_missing_reference_denied_under_expand_admitted_by_validate():
    vm = copy.deepcopy(VM)
    vm["spec"]["instancetype"] = {"name": "no-such-size"}
    resp = post(EXPAND, "/mutate", review(vm))
    assert not resp["allowed"] and "patch" not in resp
    assert '"no-such-size" not found' in resp["status"]["message"]
    # /validate ignores the missing instance type, as upstream does, but still checks the preference's
    # requirements against the VM alone (spec 3.6): fedora needs 2Gi the VM does not give.
    resp = post(EXPAND, "/validate", review(vm))
    assert not resp["allowed"] and "preference requires 2Gi" in resp["status"]["message"]
    del vm["spec"]["preference"]
    resp = post(EXPAND, "/validate", review(vm))
    assert resp["allowed"]
    assert resp["warnings"] and all(len(w) <= 120 for w in resp["warnings"])
    assert any("no-such-size" in w for w in resp["warnings"])


def test_conflict_denied_with_upstream_causes():
    vm = copy.deepcopy(VM)
    vm["spec"]["template"]["spec"]["domain"]["cpu"] = {"sockets": 4}
    for path in ("/mutate", "/validate"):
        resp = post(EXPAND, path, review(vm))
        assert not resp["allowed"] and "patch" not in resp
        status = resp["status"]
        assert status["code"] == 422 and status["reason"] == "Invalid"
        assert status["details"]["causes"] == [{
            "reason": "FieldValueInvalid", "field": "spec.template.spec.domain.cpu.sockets",
            "message": "VM field(s) spec.template.spec.domain.cpu.sockets conflicts with selected instance type"}]


def test_instancetype_object_admission():
    good = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineInstancetype",
            "metadata": {"name": "small", "namespace": "apps"},
            "spec": {"cpu": {"guest": 1}, "memory": {"guest": "1Gi"}}}
    kw = {"group": "instancetype.kubevirt.io", "version": "v1beta1", "kind": "VirtualMachineInstancetype"}
    assert post(EXPAND, "/validate", review(good, **kw))["allowed"]
    bad = copy.deepcopy(good)
    del bad["spec"]["cpu"]
    resp = post(EXPAND, "/validate", review(bad, **kw))
    assert not resp["allowed"] and "spec.cpu" in resp["status"]["message"]
    # /mutate leaves these objects alone.
    resp = post(EXPAND, "/mutate", review(bad, **kw))
    assert resp["allowed"] and "patch" not in resp


def test_validate_does_not_check_matchers_as_upstream():
    """Was tests/server/test_matcher_admission.py (over the server with `--allow-vm-policy`)."""
    ctx = catalog_context("expand", vm_policy_overrides=True)
    vm = copy.deepcopy(VM)
    vm["spec"]["instancetype"] = {"kind": "VirtualMachineInstancetype"}
    del vm["spec"]["preference"]
    resp = post(ctx, "/validate", review(vm))
    assert resp["allowed"] and any("instance type not checked" in w for w in resp["warnings"])


@pytest.mark.parametrize("kind, group", [("VirtualMachineInstancetype", "example.com"),
                                         ("Pod", "instancetype.kubevirt.io"), ("ConfigMap", "")])
def test_only_the_four_kinds_of_the_instancetype_group_are_checked(kind: str, group: str):
    bad = {"apiVersion": "v1", "kind": kind, "metadata": {"name": "x", "namespace": "apps"}, "spec": {}}
    reply = validate(review(bad, group=group, version="v1beta1", kind=kind), EXPAND)
    assert reply.allowed and reply.outcome == "skipped" and reply.kind == kind


def test_outcomes_and_the_policy_are_reported():
    conflict = copy.deepcopy(VM)
    conflict["spec"]["template"]["spec"]["domain"]["cpu"] = {"sockets": 4}
    denied = validate(review(conflict), EXPAND)
    assert (denied.allowed, denied.outcome, denied.kind, denied.policy) == (False, "denied", "VirtualMachine",
                                                                             "expand")
    allowed = validate(review(VM), catalog_context("reference"))
    assert (allowed.allowed, allowed.outcome, allowed.policy, allowed.patch_ops) == (True, "allowed", "reference", 0)
    # DELETE (and CONNECT) are not looked at
    assert validate(review(None, "DELETE", old=conflict), EXPAND).outcome == "skipped"


def test_a_vm_being_deleted_is_allowed_without_checks():
    conflict = copy.deepcopy(VM)
    conflict["spec"]["template"]["spec"]["domain"]["cpu"] = {"sockets": 4}
    conflict["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    resp = post(EXPAND, "/validate", review(conflict, "UPDATE", old=conflict))
    assert resp["allowed"] and "status" not in resp


def test_the_request_namespace_resolves_a_vm_without_one():
    """A VM without metadata.namespace is checked in the request's namespace (namespaced instance types)."""
    vm = {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "metadata": {"name": "v"},
          "spec": {"instancetype": {"name": "u1.medium"}, "template": {"spec": {"domain": {
              "devices": {}, "cpu": {"sockets": 4}}}}}}
    resp = post(EXPAND, "/validate", review(vm, namespace="apps"))
    assert not resp["allowed"] and resp["status"]["code"] == 422


def test_the_launch_security_warning_follows_the_cluster_release():
    from instancetype_webhook.kubevirt.configuration import DEFAULT_SETTINGS, with_release
    from instancetype_webhook.kubevirt.releases import resolve

    itype = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineInstancetype",
             "metadata": {"name": "sev", "namespace": "apps"},
             "spec": {"cpu": {"guest": 1}, "memory": {"guest": "1Gi"}, "launchSecurity": {"sev": {}}}}
    kw = {"group": "instancetype.kubevirt.io", "version": "v1beta1", "kind": "VirtualMachineInstancetype"}
    warned = {}
    for release in ("v1.8.4", "v1.9.0"):
        ctx = catalog_context(cluster=with_release(DEFAULT_SETTINGS, resolve(release)))
        resp = post(ctx, "/validate", review(itype, **kw))
        assert resp["allowed"]
        warned[release] = any("launchSecurity" in w for w in resp.get("warnings", []))
    assert warned == {"v1.8.4": False, "v1.9.0": True}
