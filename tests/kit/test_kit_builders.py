"""tests.kit.builders: the VM and AdmissionReview shapes the other tests rely on."""
from __future__ import annotations

import orjson
import pytest

from instancetype_webhook.admission.envelope import parse_review
from instancetype_webhook.kubevirt.causes import ExpandError
from instancetype_webhook.kubevirt.revision import stored_spec
from tests.kit.builders import NO_DOMAIN, instancetype, review, undecodable_revision, vm


def test_the_default_vm_is_a_halted_vm_with_an_empty_domain():
    assert vm() == {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
                    "metadata": {"name": "vm", "namespace": "ns"},
                    "spec": {"runStrategy": "Halted", "template": {"spec": {"domain": {"devices": {}}}}}}


def test_each_keyword_sets_its_part():
    built = vm("web", "apps", instancetype="u1.large", instancetype_kind="VirtualMachineInstancetype",
               preference={"name": "fedora", "inferFromVolume": "root"}, run_strategy=None,
               domain={"cpu": {"cores": 2}}, volumes=[{"name": "root", "containerDisk": {"image": "x"}}],
               template={"hostname": "h"}, spec={"runStrategy": "Always"}, labels={"a": "b"},
               annotations={"c": "d"}, metadata={"uid": "u"}, status={"ready": True})
    assert built["metadata"] == {"name": "web", "namespace": "apps", "labels": {"a": "b"},
                                 "annotations": {"c": "d"}, "uid": "u"}
    assert built["spec"] == {
        "template": {"spec": {"domain": {"cpu": {"cores": 2}}, "hostname": "h",
                              "volumes": [{"name": "root", "containerDisk": {"image": "x"}}]}},
        "instancetype": {"name": "u1.large", "kind": "VirtualMachineInstancetype"},
        "preference": {"name": "fedora", "inferFromVolume": "root"}, "runStrategy": "Always"}
    assert built["status"] == {"ready": True}


def test_no_domain_no_namespace_untyped():
    assert vm("v", None, domain=NO_DOMAIN, run_strategy=None, typed=False) == {
        "metadata": {"name": "v"}, "spec": {"template": {"spec": {}}}}


def test_the_vm_does_not_share_what_it_was_given():
    domain = {"devices": {}}
    built = vm(domain=domain)
    built["spec"]["template"]["spec"]["domain"]["devices"]["disks"] = []
    assert domain == {"devices": {}}


def test_review_takes_name_and_namespace_from_the_object_and_parses():
    body = review(vm("web", "apps", instancetype="u1.medium"), uid="abc", dry_run=True)
    request = body["request"]
    assert (request["uid"], request["name"], request["namespace"], request["operation"], request["dryRun"]) == (
        "abc", "web", "apps", "CREATE", True)
    assert request["kind"] == {"group": "kubevirt.io", "version": "v1", "kind": "VirtualMachine"}
    assert request["resource"]["resource"] == "virtualmachines"
    assert parse_review(orjson.dumps(body))["request"]["uid"] == "abc"  # the webhook's own parser takes it


def test_review_of_a_delete_names_the_old_object_and_other_kinds():
    old = vm("gone", "apps")
    request = review(None, "DELETE", old, group="", kind="Pod", userInfo={"username": "u"})["request"]
    assert (request["name"], request["namespace"], request["object"], request["oldObject"]) == (
        "gone", "apps", None, old)
    assert request["resource"] == {"group": "", "version": "v1", "resource": "pods"}
    assert request["userInfo"] == {"username": "u"}


def test_instancetype_is_cluster_wide_unless_namespaced():
    assert instancetype("small", 2) == {
        "apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineClusterInstancetype",
        "metadata": {"name": "small"}, "spec": {"cpu": {"guest": 2}, "memory": {"guest": "1Gi"}}}
    mine = instancetype("mine", namespace="apps", memory="2Gi")
    assert (mine["kind"], mine["metadata"], mine["spec"]["memory"]) == (
        "VirtualMachineInstancetype", {"name": "mine", "namespace": "apps"}, {"guest": "2Gi"})


def test_the_undecodable_revision_fails_to_decode_only_for_its_removed_api_version():
    revision = undecodable_revision("fedora-old", "apps", "fedora")
    assert revision["metadata"] == {"name": "fedora-old", "namespace": "apps",
                                    "labels": {"instancetype.kubevirt.io/object-name": "fedora"}}
    kinds = ("VirtualMachinePreference", "VirtualMachineClusterPreference")
    with pytest.raises(ExpandError, match='no kind "VirtualMachineClusterPreference" is registered for version '
                                          '"instancetype.kubevirt.io/v1alpha2"'):
        stored_spec(revision, kinds)
    current = {**revision, "data": {**revision["data"], "apiVersion": "instancetype.kubevirt.io/v1beta1"}}
    assert stored_spec(current, kinds) == {}
