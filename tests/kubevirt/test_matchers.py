"""Matcher validation (spec 3.5, E18) and kind resolution (spec 1.5)."""
import pytest

from instancetype_webhook.kubevirt.matchers import (
    INSTANCETYPE_MATCHER,
    PREFERENCE_MATCHER,
    UnknownKindError,
    canonical_kind,
    unknown_kind_errors,
    validate_matchers,
)
from tests.kit.builders import NO_DOMAIN
from tests.kit.builders import vm as build_vm


def vm(instancetype=None, preference=None) -> dict:
    return build_vm(namespace=None, typed=False, run_strategy=None, domain=NO_DOMAIN, instancetype=instancetype,
                    preference=preference)


def fields(causes):
    return [(c.reason, c.field, c.message) for c in causes]


def test_e18_kind_without_name():
    assert fields(validate_matchers(vm({"kind": "VirtualMachineInstancetype"}))) == [
        ("FieldValueNotFound", "spec.instancetype",
         "Either Name or InferFromVolume should be provided within the InstancetypeMatcher")
    ]


def test_name_and_infer_from_volume_together():
    assert fields(validate_matchers(vm(preference={"name": "x", "inferFromVolume": "root"}))) == [
        ("FieldValueNotSupported", "spec.preference.name",
         "Name already set, should be cleared before setting inferFromVolume")
    ]


def test_kind_and_infer_from_volume_together():
    causes = validate_matchers(vm({"kind": "virtualmachineinstancetype", "inferFromVolume": "root"}))
    assert fields(causes) == [
        ("FieldValueNotSupported", "spec.instancetype.kind",
         "Kind already set, should be cleared before setting inferFromVolume")]


def test_bad_failure_policy():
    causes = validate_matchers(vm({"inferFromVolume": "root", "inferFromVolumeFailurePolicy": "Maybe"}))
    assert fields(causes) == [
        ("FieldValueInvalid", "spec.instancetype.inferFromVolumeFailurePolicy",
         "Invalid value 'Maybe' for InferFromVolumeFailurePolicy")
    ]


def test_only_the_first_failing_matcher_is_reported():
    causes = validate_matchers(vm({}, {}))
    assert [c.field for c in causes] == ["spec.instancetype"]


def test_valid_matchers_and_absent_matchers_pass():
    assert validate_matchers(vm({"name": "u1.small"}, {"name": "fedora", "kind": "VirtualMachinePreference"})) == []
    assert validate_matchers(vm()) == []
    assert validate_matchers({}) == []


def test_update_renaming_without_clearing_revision():
    old = vm({"name": "a", "revisionName": "rev-a"})
    new = vm({"name": "b", "revisionName": "rev-a"})
    assert fields(validate_matchers(new, old)) == [
        ("FieldValueInvalid", "spec.instancetype.revisionName",
         "the Matcher Name has been updated without updating the RevisionName")
    ]
    assert validate_matchers(vm({"name": "b"}), old) == []
    assert validate_matchers(vm({"name": "b", "revisionName": "rev-b"}), old) == []
    assert validate_matchers(vm(), old) == []  # removing a matcher is always allowed


@pytest.mark.parametrize(
    "kind,expected",
    [
        (None, "VirtualMachineClusterInstancetype"),
        ("", "VirtualMachineClusterInstancetype"),
        ("VirtualMachineInstancetype", "VirtualMachineInstancetype"),
        ("virtualmachineinstancetypes", "VirtualMachineInstancetype"),
        ("VirtualMachineClusterInstancetypes", "VirtualMachineClusterInstancetype"),
    ],
)
def test_instancetype_kinds(kind, expected):
    assert canonical_kind(INSTANCETYPE_MATCHER, kind) == expected


def test_short_names_and_wrong_family_are_unknown():
    with pytest.raises(UnknownKindError, match="got unexpected kind in InstancetypeMatcher: vmf"):
        canonical_kind(INSTANCETYPE_MATCHER, "vmf")
    with pytest.raises(UnknownKindError, match="got unexpected kind in PreferenceMatcher: VirtualMachineInstancetype"):
        canonical_kind(PREFERENCE_MATCHER, "VirtualMachineInstancetype")


def test_unknown_kind_errors_lists_each_bad_matcher():
    errors = unknown_kind_errors(vm({"name": "a", "kind": "Thing"}, {"name": "b", "kind": "virtualmachinepreferences"}))
    assert [(m.field, text) for m, text in errors] == [("instancetype",
                                                        "got unexpected kind in InstancetypeMatcher: Thing")]


RENAMED = "the Matcher Name has been updated without updating the RevisionName"


@pytest.mark.parametrize(
    "old,new,expected",
    [
        # (old spec matchers, new spec matchers, the cause fields upstream reports)
        ({"instancetype": {"name": "a", "revisionName": "r"}},
         {"instancetype": {"name": "a", "revisionName": "r", "kind": "VirtualMachineInstancetype"}}, []),
        ({"preference": {"name": "p", "revisionName": "r"}}, {"preference": {"name": "q", "revisionName": "r"}},
         ["spec.preference.revisionName"]),
        ({"preference": {"name": "p", "revisionName": "r"}}, {"preference": {"name": "q", "revisionName": "r2"}}, []),
        ({"instancetype": {"name": "a"}}, {"instancetype": {"name": "a", "revisionName": "other"}}, []),
        ({"instancetype": {"name": "a", "revisionName": "r"}}, {"instancetype": {"name": "a"}}, []),
        ({"instancetype": {"name": "a"}}, {"instancetype": {"name": "b"}}, []),
        ({}, {"instancetype": {"name": "b", "revisionName": "r"}}, []),
        # both renamed with their revisions kept: only the instance type's cause
        ({"instancetype": {"name": "a", "revisionName": "r"}, "preference": {"name": "p", "revisionName": "s"}},
         {"instancetype": {"name": "b", "revisionName": "r"}, "preference": {"name": "q", "revisionName": "s"}},
         ["spec.instancetype.revisionName"]),
        # the UPDATE check comes before the matcher checks of the new VM
        ({"instancetype": {"name": "a", "revisionName": "r"}},
         {"instancetype": {"name": "b", "revisionName": "r"}, "preference": {}}, ["spec.instancetype.revisionName"]),
        ({"instancetype": {"name": "a"}}, {"instancetype": {"name": "a", "inferFromVolume": "root"}},
         ["spec.instancetype.name"]),
    ],
)
def test_update_matcher_checks(old, new, expected):
    causes = validate_matchers({"spec": new}, {"spec": old})
    assert [c.field for c in causes] == expected
    assert all(c.message == RENAMED and c.reason == "FieldValueInvalid"
               for c in causes if c.field.endswith("revisionName"))


def test_update_checks_do_not_run_on_create():
    assert validate_matchers(vm({"name": "b", "revisionName": "r"})) == []
