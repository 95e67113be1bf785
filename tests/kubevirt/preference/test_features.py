"""Preference features (spec 2.6; kubevirt.preference.features)."""
from __future__ import annotations

from tests.kit.kubevirt import applied


def test_hyperv_is_merged_field_by_field_and_go_shape_is_kept():
    spec = {"domain": {"features": {"hyperv": {"relaxed": {"enabled": False}}}}}
    pref = {"features": {"preferredHyperv": {"relaxed": {}, "vapic": {}, "vendorid": {"vendorId": ""}},
                         "preferredApic": {"endOfInterrupt": False}, "preferredKvm": {"hidden": False}}}
    features = applied(pref, spec)["spec"]["domain"]["features"]
    assert features == {"hyperv": {"relaxed": {"enabled": False}, "vapic": {}, "vendorid": {}}, "apic": {}, "kvm": {}}
    passthrough = {"domain": {"features": {"hypervPassthrough": {"enabled": True}}}}
    assert "hyperv" not in applied(pref, passthrough)["spec"]["domain"]["features"]
