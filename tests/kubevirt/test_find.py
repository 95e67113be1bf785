"""Finding specs: kinds and scopes, loose kind names, revisions, and upstream's error texts."""
from __future__ import annotations

import pytest

from instancetype_webhook.kubevirt.causes import ExpandError
from instancetype_webhook.kubevirt.find import find_instancetype_spec, find_preference_spec, resolve_kind
from instancetype_webhook.kubevirt.releases import MAIN_PROFILE
from instancetype_webhook.kubevirt.source import InMemorySource
from tests.kit.builders import NO_DOMAIN
from tests.kit.builders import vm as build_vm


def obj(kind, name, spec, namespace=None, labels=None):
    meta = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": kind, "metadata": meta, "spec": spec}


NS_IT = {"cpu": {"guest": 1}, "memory": {"guest": "1Gi"}}
CL_IT = {"cpu": {"guest": 2}, "memory": {"guest": "2Gi"}}
SOURCE = InMemorySource([
    obj("VirtualMachineInstancetype", "shared", NS_IT, "ns"),
    obj("VirtualMachineClusterInstancetype", "shared", CL_IT),
    obj("VirtualMachinePreference", "pref", {"cpu": {"preferredCPUTopology": "cores"}}, "ns"),
    obj("VirtualMachineClusterPreference", "pref", {"cpu": {"preferredCPUTopology": "threads"}}),
    {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": {"name": "rev-1", "namespace": "ns",
     "labels": {"instancetype.kubevirt.io/object-name": "shared"}},
     "data": obj("VirtualMachineClusterInstancetype", "shared", {"cpu": {"guest": 8}, "memory": {"guest": "8Gi"}})},
], default_namespace="ns")


def vm(instancetype=None, preference=None, namespace="ns", status=None):
    return build_vm("v", namespace, typed=False, run_strategy=None, domain=NO_DOMAIN, instancetype=instancetype,
                    preference=preference, status=status or None)


@pytest.mark.parametrize("kind, expected", [
    ("", CL_IT), ("VirtualMachineClusterInstancetype", CL_IT), ("virtualmachineclusterinstancetypes", CL_IT),
    ("VirtualMachineInstancetype", NS_IT), ("virtualmachineinstancetypes", NS_IT),
    ("VIRTUALMACHINEINSTANCETYPE", NS_IT),
])
def test_kind_picks_the_scope(kind, expected):
    assert find_instancetype_spec(vm({"name": "shared", "kind": kind}), SOURCE, MAIN_PROFILE) == expected


def test_no_matcher_is_no_spec():
    assert find_instancetype_spec(vm(), SOURCE, MAIN_PROFILE) is None
    assert find_preference_spec(vm(), SOURCE, MAIN_PROFILE) is None


@pytest.mark.parametrize("kind", ["vmf", "VirtualMachineThing", "VirtualMachinePreference"])
def test_unknown_kind_is_a_bad_request(kind):
    with pytest.raises(ExpandError) as err:
        find_instancetype_spec(vm({"name": "shared", "kind": kind}), SOURCE, MAIN_PROFILE)
    assert err.value.kind == "badRequest"
    assert err.value.message == f"got unexpected kind in InstancetypeMatcher: {kind}"


def test_preference_kinds_and_errors():
    lowercase = vm(preference={"name": "pref", "kind": "virtualmachinepreference"})
    assert find_preference_spec(lowercase, SOURCE, MAIN_PROFILE) == {"cpu": {"preferredCPUTopology": "cores"}}
    cluster_wide = find_preference_spec(vm(preference={"name": "pref"}), SOURCE, MAIN_PROFILE)
    assert cluster_wide["cpu"]["preferredCPUTopology"] == "threads"
    with pytest.raises(ExpandError, match="got unexpected kind in PreferenceMatcher: VirtualMachineInstancetype"):
        wrong = vm(preference={"name": "pref", "kind": "VirtualMachineInstancetype"})
        find_preference_spec(wrong, SOURCE, MAIN_PROFILE)


@pytest.mark.parametrize("matcher, namespace, message", [
    ({"name": "nope"}, "ns", 'virtualmachineclusterinstancetypes.instancetype.kubevirt.io "nope" not found'),
    ({"name": "shared", "kind": "VirtualMachineInstancetype"}, "other",
     'virtualmachineinstancetypes.instancetype.kubevirt.io "shared" not found'),
    ({"name": "x", "revisionName": "rev-missing"}, "ns", 'controllerrevisions.apps "rev-missing" not found'),
])
def test_not_found_texts(matcher, namespace, message):
    with pytest.raises(ExpandError) as err:
        find_instancetype_spec(vm(matcher, namespace=namespace), SOURCE, MAIN_PROFILE)
    assert (err.value.kind, err.value.message) == ("notFound", message)


def test_missing_preference_texts():
    with pytest.raises(ExpandError, match='virtualmachinepreferences.instancetype.kubevirt.io "p" not found'):
        find_preference_spec(vm(preference={"name": "p", "kind": "VirtualMachinePreference"}), SOURCE, MAIN_PROFILE)
    with pytest.raises(ExpandError, match='virtualmachineclusterpreferences.instancetype.kubevirt.io "p" not found'):
        find_preference_spec(vm(preference={"name": "p"}), SOURCE, MAIN_PROFILE)


def test_revision_name_wins_over_the_live_object():
    spec = find_instancetype_spec(vm({"name": "shared", "revisionName": "rev-1"}), SOURCE, MAIN_PROFILE)
    assert spec["cpu"]["guest"] == 8


def test_status_revision_is_used_only_when_its_label_names_the_matcher():
    status = {"instancetypeRef": {"controllerRevisionRef": {"name": "rev-1"}}}
    assert find_instancetype_spec(vm({"name": "shared"}, status=status), SOURCE, MAIN_PROFILE)["cpu"]["guest"] == 8
    with pytest.raises(ExpandError, match='"other" not found'):
        find_instancetype_spec(vm({"name": "other"}, status=status), SOURCE, MAIN_PROFILE)


def test_revision_holding_the_wrong_family_is_refused():
    with pytest.raises(ExpandError, match="unexpected type in ControllerRevision"):
        find_preference_spec(vm(preference={"name": "x", "revisionName": "rev-1"}), SOURCE, MAIN_PROFILE)


def test_resolve_kind_helper():
    assert resolve_kind(None) == "VirtualMachineClusterInstancetype"
    assert resolve_kind({"kind": "virtualmachinepreferences"}, preference=True) == "VirtualMachinePreference"


@pytest.mark.parametrize("vm_doc", [
    {"metadata": True, "spec": {"instancetype": {"name": "shared"}}, "status": True},
    {"metadata": {"namespace": 5}, "spec": {"instancetype": {"name": "shared"}}, "status": {"instancetypeRef": []}},
    {"spec": {"instancetype": {"name": "shared"}}, "status": {"instancetypeRef": {"controllerRevisionRef": "x"}}},
])
def test_mis_typed_optional_parts_are_ignored(vm_doc):
    assert find_instancetype_spec(vm_doc, SOURCE, MAIN_PROFILE) == CL_IT


@pytest.mark.parametrize("matcher", [True, "shared", ["shared"], 3])
def test_a_matcher_that_is_not_an_object_is_a_bad_request(matcher):
    with pytest.raises(ExpandError) as err:
        find_preference_spec({"spec": {"preference": matcher}}, SOURCE, MAIN_PROFILE)
    assert err.value.kind == "badRequest"
