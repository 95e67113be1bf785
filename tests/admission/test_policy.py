"""admission.policy: which policy applies and whether a review flattens (spec 4.5), pure functions."""
from __future__ import annotations

import json

from instancetype_webhook.admission.policy import POLICY_KEY, captured_revision, decide, provenance, with_annotation
from instancetype_webhook.kubevirt.source import InMemorySource

VM = {"metadata": {"name": "v", "namespace": "ns"}, "spec": {"instancetype": {"name": "u1.small"}, "template": {}}}
CAPTURED = {"status": {"instancetypeRef": {"controllerRevisionRef": {"name": "v-u1.small-rev"}}}}


def labels(mapping):
    return lambda ns: mapping.get(ns)


def test_server_policy_and_operation():
    assert not decide("reference", "CREATE", VM, None, "ns").expand
    assert decide("expand", "CREATE", VM, None, "ns").expand
    assert decide("expand", "UPDATE", VM, {}, "ns").expand
    assert not decide("expand", "UPDATE", VM, CAPTURED, "ns").expand
    assert decide("expandAll", "UPDATE", VM, CAPTURED, "ns").expand
    no_matcher = {"metadata": {}, "spec": {"template": {}}}
    assert not decide("expandAll", "CREATE", no_matcher, None, "ns").expand


def test_captured_revision_reads_either_ref():
    assert captured_revision(CAPTURED) == "v-u1.small-rev"
    assert captured_revision({"status": {"preferenceRef": {"controllerRevisionRef": {"name": "p"}}}}) == "p"
    assert captured_revision({"status": {"preferenceRef": {"controllerRevisionRef": {"name": ""}}}}) is None
    assert captured_revision(None) is None
    assert captured_revision({"status": "garbage"}) is None


def test_overrides_most_specific_wins():
    ns = labels({"opt-in": {POLICY_KEY: "expand"}, "bad": {POLICY_KEY: "always"}})
    d = decide("reference", "CREATE", VM, None, "opt-in", ns)
    assert d.expand and d.origin == "namespace"
    vm = {**VM, "metadata": {**VM["metadata"], "annotations": {POLICY_KEY: "reference"}}}
    d = decide("expand", "CREATE", vm, None, "opt-in", ns, vm_overrides=True)
    assert not d.expand and d.origin == "annotation"
    d = decide("expand", "CREATE", VM, None, "bad", ns)
    assert d.expand and d.origin == "server" and "not a policy" in d.warnings[0]


def test_provenance_records_uid_generation_or_revision():
    source = InMemorySource([{"kind": "VirtualMachineClusterInstancetype",
                              "metadata": {"name": "u1.small", "uid": "abc", "generation": 3}}])
    assert json.loads(provenance(VM, "ns", source)) == {"instancetype": {
        "kind": "VirtualMachineClusterInstancetype", "name": "u1.small", "uid": "abc", "generation": 3}}
    pinned = {"spec": {"preference": {"name": "fedora", "kind": "virtualmachinepreferences", "revisionName": "r1"}}}
    assert json.loads(provenance(pinned, "ns", source)) == {"preference": {
        "kind": "VirtualMachinePreference", "name": "fedora", "revision": "r1"}}


def test_with_annotation_shares_everything_else():
    flat = {"metadata": {"name": "v", "annotations": {"a": "1"}}, "spec": {"x": 1}}
    out = with_annotation(flat, "k/v", "2")
    assert out["metadata"]["annotations"] == {"a": "1", "k/v": "2"}
    assert flat["metadata"]["annotations"] == {"a": "1"}  # the input is not modified
    assert out["spec"] is flat["spec"]


def test_vm_annotation_is_ignored_unless_the_admin_allows_overrides():
    ns = labels({"opt-in": {POLICY_KEY: "expandAll"}})
    vm = {**VM, "metadata": {**VM["metadata"], "annotations": {POLICY_KEY: "reference"}}}
    d = decide("expand", "CREATE", vm, None, "ns", ns)
    assert d.expand and d.origin == "server" and d.policy == "expand"
    assert d.warnings == [f"{POLICY_KEY} annotation ignored (VM overrides off): policy expand (cluster) applies"]
    d = decide("reference", "CREATE", vm, None, "opt-in", ns)
    assert d.expand and d.origin == "namespace" and d.warnings[0].endswith("policy expandAll (namespace) applies")
    assert len(d.warnings[0]) <= 120  # the API server cuts longer warnings
    assert not decide("expand", "CREATE", vm, None, "ns", ns, vm_overrides=True).expand
