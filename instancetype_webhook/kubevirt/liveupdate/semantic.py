"""Go's `equality.Semantic.DeepEqual` on JSON shapes of KubeVirt types: quantities by value, an empty map or
list equals an absent one, and so does the zero value of a non-pointer field (`sockets: 0`,
`dedicatedCpuPlacement: false`, an empty non-pointer struct such as `devices: {}`). A pointer field's zero
value (`autoattachPodInterface: false`, `features: {}`) is kept: it differs from an absent one."""
from __future__ import annotations

from typing import Any, Final

from instancetype_webhook.kubevirt.quantity import QuantityError, parse

# Keys whose zero value Go keeps (pointer fields): a present false/0/"" or {} differs from an absent one.
_POINTER_SCALARS: Final = frozenset({
    "autoattachPodInterface", "autoattachGraphicsDevice", "autoattachSerialConsole", "autoattachMemBalloon",
    "autoattachInputDevice", "autoattachVSOCK", "blockMultiQueue", "networkInterfaceMultiqueue",
    "useVirtioTransitional", "enabled", "secureBoot", "persistent", "hostname", "subdomain",
    "terminationGracePeriodSeconds", "priorityClassName", "evictionStrategy", "startStrategy", "readOnly",
    "bootOrder", "shareable", "dedicatedIOThread", "ioThreadsPolicy", "guest", "maxGuest", "schedulerName",
})
# JSON objects that are Go maps or non-pointer structs: empty equals absent.
_VALUE_OBJECTS: Final = frozenset({
    "devices", "resources", "requests", "limits", "nodeSelector", "labels", "annotations", "metadata",
})


def _quantity(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return ("quantity", parse(value).value)
        except QuantityError:
            return value
    return value


def normalize(value: Any, key: str = "") -> Any:
    """A comparable form of a JSON value under Go's semantic equality (None: same as absent)."""
    if isinstance(value, dict):
        out = {}
        for child_key, child in value.items():
            norm = normalize(child, child_key)
            if norm is not None:
                out[child_key] = norm
        if not out and key in _VALUE_OBJECTS:
            return None
        return out
    if isinstance(value, list):
        return [normalize(item) for item in value] or None
    if value is None:
        return None
    if value in (0, "", False) and not isinstance(value, float) and key not in _POINTER_SCALARS:
        return None
    return _quantity(value)


def semantic_equal(a: Any, b: Any) -> bool:
    return bool(normalize(a) == normalize(b))
