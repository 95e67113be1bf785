"""The shape Go's JSON encoder gives values copied from instance types and preferences.

Upstream decodes these objects into Go structs and the VM is printed from structs again, so a
copied value loses what Go would not print: nil pointers (`null`) and the zero value of
non-pointer `omitempty` fields (`endOfInterrupt: false`, `tickPolicy: ""`, ...). Pointer fields keep
their zero values (`present: false` on a timer stays). A Shape names, for one API type, its
non-pointer omitempty scalar fields and the shapes of its nested fields.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final


@dataclass(frozen=True)
class Shape:
    plain: frozenset[str] = frozenset()
    children: dict[str, Shape] = field(default_factory=dict)


ANY: Final = Shape()
APIC: Final = Shape(frozenset({"endOfInterrupt"}))
KVM: Final = Shape(frozenset({"hidden"}))
HYPERV: Final = Shape(children={"vendorid": Shape(frozenset({"vendorId"}))})
_TICK: Final = Shape(frozenset({"tickPolicy"}))
TIMER: Final = Shape(children={"hpet": _TICK, "pit": _TICK, "rtc": Shape(frozenset({"tickPolicy", "track"}))})
CPU_FEATURE: Final = Shape(frozenset({"policy"}))
LAUNCH_SECURITY: Final = Shape(children={"sev": Shape(frozenset({"session", "dhCert"}))})
REALTIME: Final = Shape(frozenset({"mask"}))
HUGEPAGES: Final = Shape(frozenset({"pageSize"}))
DEVICE: Final = Shape(frozenset({"tag"}))  # GPU and HostDevice items


def go_clone(value: Any, shape: Shape = ANY) -> Any:
    """A deep copy of `value` as Go would print it after decoding it into the type `shape` describes."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if item is None or (key in shape.plain and _is_zero(item)):
                continue
            out[key] = go_clone(item, shape.children.get(key, ANY))
        return out
    if isinstance(value, list):
        return [go_clone(item, shape) for item in value]
    return value


def _is_zero(value: Any) -> bool:
    return value is False or value == 0 or value == ""


# Lists and maps that Go prints even when empty (no `omitempty` on the field): k8s NodeSelector's
# `nodeSelectorTerms` and the guest agent's SSH key propagation `users`.
_KEPT_EMPTY: Final = frozenset({"nodeSelectorTerms", "users"})
# The map-typed fields (`map[string]...`, all `omitempty`) a VirtualMachine can carry; every other JSON
# object in it is a Go struct, which Go prints even when empty (`resources: {}`, `blank: {}`).
_MAPS: Final = frozenset({"labels", "annotations", "nodeSelector", "requests", "limits", "matchLabels"})


def go_printed(value: Any) -> Any:
    """`value` (a VirtualMachine, or part of one) as Go's encoder prints it after decoding it into the API
    types: `null` values, empty lists and empty maps are gone (their fields are pointers or `omitempty`),
    empty structs stay. A new value; the input is untouched."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            item = go_printed(item)
            if item is None or (key not in _KEPT_EMPTY and _empty_collection(key, item)):
                continue
            out[key] = item
        return out
    if isinstance(value, list):
        return [go_printed(item) for item in value]
    return value


def _empty_collection(key: str, item: Any) -> bool:
    return item == [] or (key in _MAPS and item == {})
