"""Keep cached reference objects small: what a long-lived cache of thousands of objects stores.

Every object of the same kind repeats the same keys ("spec", "cpu", "guest", ...) and mostly the same
short values ("2Mi", "virtio", "instancetype.kubevirt.io/v1beta1"). Interning them makes each a
single shared string. `metadata.managedFields` (server-side apply bookkeeping, often larger than the
spec) is never read by the expansion and is dropped.
"""
from __future__ import annotations

import sys
from typing import Any

SHORT_VALUE = 64  # longer strings (descriptions, icons) are rarely shared


def compact(obj: dict[str, Any]) -> dict[str, Any]:
    """`obj` with interned keys and short string values, without managedFields (a new object)."""
    out = _compact(obj)
    meta = out.get("metadata")
    if isinstance(meta, dict):
        meta.pop("managedFields", None)
    return out


def _compact(value: Any) -> Any:
    kind = type(value)
    if kind is dict:
        return {sys.intern(k) if type(k) is str else k: _compact(v) for k, v in value.items()}
    if kind is list:
        return [_compact(v) for v in value]
    if kind is str and len(value) <= SHORT_VALUE:
        return sys.intern(value)
    return value
