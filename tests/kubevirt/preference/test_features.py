"""Preference features (spec 2.6; kubevirt.preference.features)."""
from __future__ import annotations

from instancetype_webhook.kubevirt.preference.features import HYPERV_FIELDS, apply_feature_preferences
from tests.kit.kubevirt import applied


def test_hyperv_is_merged_field_by_field_and_go_shape_is_kept():
    spec = {"domain": {"features": {"hyperv": {"relaxed": {"enabled": False}}}}}
    pref = {"features": {"preferredHyperv": {"relaxed": {}, "vapic": {}, "vendorid": {"vendorId": ""}},
                         "preferredApic": {"endOfInterrupt": False}, "preferredKvm": {"hidden": False}}}
    features = applied(pref, spec)["spec"]["domain"]["features"]
    assert features == {"hyperv": {"relaxed": {"enabled": False}, "vapic": {}, "vendorid": {}}, "apic": {}, "kvm": {}}
    passthrough = {"domain": {"features": {"hypervPassthrough": {"enabled": True}}}}
    assert "hyperv" not in applied(pref, passthrough)["spec"]["domain"]["features"]


def test_acpi_always_overwrites_the_others_only_fill_in():
    domain = {"features": {"acpi": {"enabled": False}, "apic": {"enabled": False}, "smm": {"enabled": False}}}
    apply_feature_preferences({"preferredAcpi": {"enabled": True}, "preferredApic": {}, "preferredSmm": {},
                               "preferredPvspinlock": {"enabled": False}}, domain)
    assert domain["features"] == {"acpi": {"enabled": True}, "apic": {"enabled": False}, "smm": {"enabled": False},
                                  "pvspinlock": {"enabled": False}}


def test_hyperv_passthrough_off_still_merges_and_unknown_hyperv_fields_are_ignored():
    domain = {"features": {"hypervPassthrough": {"enabled": False}}}
    apply_feature_preferences({"preferredHyperv": {"relaxed": {}, "notAField": {}}}, domain)
    assert domain["features"] == {"hypervPassthrough": {"enabled": False}, "hyperv": {"relaxed": {}}}
    assert "notAField" not in HYPERV_FIELDS and "tlbflush" in HYPERV_FIELDS


def test_an_empty_features_section_creates_the_features_object():
    domain = {}
    apply_feature_preferences({}, domain)
    assert domain == {"features": {}}
