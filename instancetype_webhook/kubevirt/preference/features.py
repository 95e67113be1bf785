"""Preference features (upstream `preference/apply/features.go`). `preferredAcpi` always overwrites
(the VMI field is not a pointer); Hyper-V is merged field by field unless hypervPassthrough is on."""
from __future__ import annotations

from typing import Any, Final

from instancetype_webhook.kubevirt.goshape import ANY, APIC, HYPERV, KVM, go_clone

HYPERV_FIELDS: Final[tuple[str, ...]] = (
    "evmcs", "frequencies", "ipi", "reenlightenment", "relaxed", "reset", "runtime",
    "spinlocks", "synic", "synictimer", "tlbflush", "vapic", "vpindex", "vendorid",
)
_SIMPLE: Final[tuple[tuple[str, str], ...]] = (
    ("preferredKvm", "kvm"), ("preferredPvspinlock", "pvspinlock"), ("preferredSmm", "smm"))


def apply_feature_preferences(prefs: dict[str, Any], domain: dict[str, Any]) -> None:
    features = dict(domain.get("features") or {})
    domain["features"] = features
    if prefs.get("preferredAcpi") is not None:
        features["acpi"] = go_clone(prefs["preferredAcpi"])
    if prefs.get("preferredApic") is not None and features.get("apic") is None:
        features["apic"] = go_clone(prefs["preferredApic"], APIC)
    passthrough = features.get("hypervPassthrough") or {}
    if prefs.get("preferredHyperv") is not None and not passthrough.get("enabled"):
        hyperv = dict(features.get("hyperv") or {})
        for name in HYPERV_FIELDS:
            if prefs["preferredHyperv"].get(name) is not None and hyperv.get(name) is None:
                hyperv[name] = go_clone(prefs["preferredHyperv"][name], HYPERV.children.get(name, ANY))
        features["hyperv"] = hyperv
    for src, dst in _SIMPLE:
        if prefs.get(src) is not None and features.get(dst) is None:
            features[dst] = go_clone(prefs[src], KVM if dst == "kvm" else ANY)
