"""<features>: acpi, apic, Hyper-V enlightenments, smm, kvm, pvspinlock, pmu, vmport."""
from __future__ import annotations

from typing import Any, Final

from instancetype_webhook.domxml.conversion import Conversion
from instancetype_webhook.domxml.elements import Element, new, on_off, sub

# VMI field -> libvirt element, in libvirt's (Go struct) order; spinlocks, stimer, vendor_id are special.
HYPERV_ORDER: Final = ("relaxed", "vapic", "spinlocks", "vpindex", "runtime", "synic", "synictimer", "reset",
                       "vendorid", "frequencies", "reenlightenment", "tlbflush", "ipi", "evmcs")


def _enabled(state: dict[str, Any] | None) -> bool:
    return state is not None and state.get("enabled", True) is not False


def features_element(conv: Conversion) -> Element:
    features = conv.features
    element = new("features")
    if features.get("acpi") is None or _enabled(features.get("acpi")):
        sub(element, "acpi")
    if _enabled(features.get("apic")):
        sub(element, "apic")
    if features.get("hyperv") is not None:
        _hyperv(element, features["hyperv"])
    elif features.get("hypervPassthrough") is not None and _enabled(features["hypervPassthrough"]):
        sub(element, "hyperv", {"mode": "passthrough"})
    if _enabled(features.get("smm")):
        sub(element, "smm")
    _kvm(conv, element)
    if features.get("pvspinlock") is not None:
        sub(element, "pvspinlock", {"state": on_off(_enabled(features["pvspinlock"]))})
    if conv.dedicated and conv.realtime or (conv.launch_security or {}).get("tdx") is not None:
        sub(element, "pmu", {"state": "off"})
    if conv.arch.vmport:
        sub(element, "vmport", {"state": "off"})
    return element


def _hyperv(parent: Element, hyperv: dict[str, Any]) -> None:
    element = sub(parent, "hyperv")
    for name in HYPERV_ORDER:
        state = hyperv.get(name)
        if state is None:
            continue
        on = on_off(_enabled(state))
        if name == "spinlocks":
            sub(element, "spinlocks", {"state": on, "retries": state.get("spinlocks")})
        elif name == "synictimer":
            stimer = sub(element, "stimer", {"state": on})
            if state.get("direct") is not None:
                sub(stimer, "direct", {"state": on_off(_enabled(state["direct"]))})
        elif name == "tlbflush":  # from v1.8 the VMI's tlbflush carries direct and extended (v1.7's schema lacks them)
            tlbflush = sub(element, "tlbflush", {"state": on})
            for child in ("direct", "extended"):
                if state.get(child) is not None:
                    sub(tlbflush, child, {"state": on_off(_enabled(state[child]))})
        elif name == "vendorid":
            sub(element, "vendor_id", {"state": on, "value": state.get("vendorid") or None})
        else:
            sub(element, name, {"state": on})


def _kvm(conv: Conversion, parent: Element) -> None:
    kvm = conv.features.get("kvm")
    hint = conv.dedicated and conv.spec.get("architecture") == "amd64"  # upstream hints amd64 VMIs only
    if kvm is None and not hint:
        return
    element = sub(parent, "kvm")
    if kvm is not None:
        sub(element, "hidden", {"state": on_off(bool(kvm.get("hidden")))})
    if hint:
        sub(element, "hint-dedicated", {"state": "on"})
