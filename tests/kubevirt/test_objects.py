"""Admission of instance type and preference objects (spec 3.8)."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from instancetype_webhook.kubevirt.objects import admit_object, instancetype_causes
from tests.kit.kubevirt import JSON

IT_KINDS = ["VirtualMachineInstancetype", "VirtualMachineClusterInstancetype"]
PREF_KINDS = ["VirtualMachinePreference", "VirtualMachineClusterPreference"]


def obj(kind: str, spec) -> dict:
    return {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": kind, "metadata": {"name": "x"}, "spec": spec}


def it_spec(**memory) -> dict:
    return {"cpu": {"guest": 2}, "memory": {"guest": "2Gi", **memory}}


@pytest.mark.parametrize("kind", IT_KINDS)
def test_valid_instancetype_is_allowed_without_warnings(kind):
    verdict = admit_object(obj(kind, it_spec()))
    assert verdict.allowed and verdict.warnings == []


@pytest.mark.parametrize("kind", IT_KINDS)
def test_overcommit_out_of_range_is_refused_by_the_schema_first(kind):
    verdict = admit_object(obj(kind, it_spec(overcommitPercent=150)))
    assert not verdict.allowed and verdict.code == 422
    assert [c.to_dict() for c in verdict.causes] == [
        {
            "reason": "FieldValueInvalid",
            "field": "spec.memory.overcommitPercent",
            "message": "spec.memory.overcommitPercent in body should be less than or equal to 100",
        }
    ]
    assert (admit_object(obj(kind, it_spec(overcommitPercent=-1))).causes[0].message
            .endswith("greater than or equal to 0"))


def test_webhook_range_message_behind_the_schema():
    assert [(c.field, c.message) for c in instancetype_causes(it_spec(overcommitPercent=101))] == [
        ("spec.memory.overcommitPercent", "spec.memory.overcommitPercent '101': must be in range between 0 and 100.")
    ]


def test_schema_types_and_unknown_fields():
    verdict = admit_object(obj(IT_KINDS[0],
                               {"cpu": {"guest": 2, "dedicatedCPUPlacement": "yes"}, "memory": {"guest": True}}))
    assert [(c.reason, c.field) for c in verdict.causes] == [
        ("FieldValueTypeInvalid", "spec.cpu.dedicatedCPUPlacement"),
        ("FieldValueTypeInvalid", "spec.memory.guest"),
    ]
    assert verdict.causes[0].message == "spec.cpu.dedicatedCPUPlacement in body must be of type boolean: 'string'"
    pruned = admit_object(obj(IT_KINDS[0], {**it_spec(), "someFutureField": {"x": 1}}))
    assert pruned.allowed
    gpus = admit_object(obj(IT_KINDS[0], {**it_spec(), "gpus": [{"deviceName": "x"}]}))
    assert [c.field for c in gpus.causes] == ["spec.gpus[0].name"]
    wrong_version = admit_object({**obj(PREF_KINDS[0], {}), "apiVersion": "instancetype.kubevirt.io/v1alpha1"})
    assert [(c.reason, c.field) for c in wrong_version.causes] == [("FieldValueNotSupported", "apiVersion")]


def test_overcommit_with_hugepages():
    verdict = admit_object(obj(IT_KINDS[0], it_spec(overcommitPercent=10, hugepages={"pageSize": "2Mi"})))
    assert verdict.message == ("spec.memory.overcommitPercent and spec.memory.hugepages "
                               "should not be requested together.")
    assert verdict.causes[0].field == "spec.memory.overcommitPercent"


def test_launch_security_is_deprecated_but_allowed():
    spec = {**it_spec(), "launchSecurity": {"sev": {}}}
    verdict = admit_object(obj(IT_KINDS[1], spec))
    assert verdict.allowed
    assert verdict.warnings == ["launchSecurity is deprecated and will be removed in a future release. "
                                "Use preference instead."]


def test_missing_required_fields_are_schema_causes():
    verdict = admit_object(obj(IT_KINDS[0], {"cpu": {}, "memory": {"guest": "not-a-quantity"}}))
    assert not verdict.allowed and verdict.code == 422
    assert [c.field for c in verdict.causes] == ["spec.cpu.guest", "spec.memory.guest"]
    assert verdict.causes[0].message == "spec.cpu.guest in body is required"
    assert admit_object({"kind": IT_KINDS[0], "metadata": {"name": "x"}}).causes[0].field == "spec"
    mistyped = obj(IT_KINDS[0], {"cpu": {"guest": "two"}, "memory": {"guest": 1}})
    assert [c.field for c in admit_object(mistyped).causes] == ["spec.cpu.guest"]


@pytest.mark.parametrize("kind", PREF_KINDS)
def test_unknown_topology(kind):
    verdict = admit_object(obj(kind, {"cpu": {"preferredCPUTopology": "diagonal"}}))
    assert [(c.field, c.message) for c in verdict.causes] == [("spec.cpu.preferredCPUTopology",
                                                               "unknown preferredCPUTopology diagonal")]


@pytest.mark.parametrize("old,new", [("preferSockets", "sockets"), ("preferSpread", "spread"), ("preferAny", "any")])
def test_deprecated_topology_warns(old, new):
    verdict = admit_object(obj(PREF_KINDS[0], {"cpu": {"preferredCPUTopology": old}}))
    assert verdict.allowed
    assert verdict.warnings == [f"PreferredCPUTopology {old} is deprecated for removal in a future release, "
                                f"please use {new} instead"]


def test_spread_across_unsupported():
    verdict = admit_object(obj(PREF_KINDS[0],
                               {"cpu": {"preferredCPUTopology": "spread", "spreadOptions": {"across": "Sockets"}}}))
    assert [(c.field, c.message) for c in verdict.causes] == [("spec.cpu.spreadOptions.across",
                                                               "across Sockets is not supported")]


def test_cores_threads_needs_ratio_two():
    bad = {"cpu": {"preferredCPUTopology": "spread", "spreadOptions": {"across": "CoresThreads", "ratio": 4}}}
    verdict = admit_object(obj(PREF_KINDS[1], bad))
    assert verdict.causes[0].field == "spec.cpu.spreadOptions.ratio"
    assert verdict.causes[0].message == ("only a ratio of 2 (1 core 2 threads) is allowed "
                                         "when spreading vCPUs over cores and threads")
    legacy = {"cpu": {"preferredCPUTopology": "spread", "spreadOptions": {"across": "CoresThreads"}},
              "preferSpreadSocketToCoreRatio": 3}
    assert not admit_object(obj(PREF_KINDS[1], legacy)).allowed
    ok = {"cpu": {"preferredCPUTopology": "spread", "spreadOptions": {"across": "CoresThreads"}}}
    assert admit_object(obj(PREF_KINDS[1], ok)).allowed


def test_across_ignored_without_spread():
    assert admit_object(obj(PREF_KINDS[0],
                            {"cpu": {"preferredCPUTopology": "cores", "spreadOptions": {"across": "X"}}})).allowed


def test_preference_requirements_schema():
    verdict = admit_object(obj(PREF_KINDS[0], {"requirements": {"cpu": {}, "memory": {}}}))
    assert [c.field for c in verdict.causes] == ["spec.requirements.cpu.guest", "spec.requirements.memory.guest"]


def test_delete_and_connect_are_not_checked():
    assert admit_object(obj(PREF_KINDS[0], {"cpu": {"preferredCPUTopology": "diagonal"}}), operation="DELETE").allowed


def test_other_kinds_are_a_bad_request():
    verdict = admit_object({"kind": "VirtualMachine", "spec": {}})
    assert not verdict.allowed and verdict.code == 400 and "VirtualMachine" in verdict.message


# -- never a crash: arbitrary JSON as the spec (moved from test_admission.py) --------------------
@settings(max_examples=150, deadline=None)
@given(spec=JSON, kind=st.sampled_from(["VirtualMachineInstancetype", "VirtualMachineClusterPreference"]))
def test_admit_object_answers_for_any_json(spec, kind):
    verdict = admit_object({"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": kind, "metadata": {"name": "x"},
                            "spec": spec})
    assert verdict.allowed or (verdict.code in (400, 422) and verdict.message)
