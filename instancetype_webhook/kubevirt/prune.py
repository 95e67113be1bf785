"""What a release's API server does to an object its schema partly lacks: the unknown fields are pruned.

Used at the input boundary only, for objects that are not the cluster's own (files given to the CLI, the
embedded catalogue, the conformance inputs): a live cluster's API server has pruned them already.
The paths come from `releases.SCHEMA_ADDED`; `a.b[].c` walks every item of the list `b`.
"""
from __future__ import annotations

import copy
from typing import Any

from instancetype_webhook.kubevirt.releases import ReleaseProfile, SchemaKind

__all__ = ["kind_of", "prune_object", "prune_to_release"]

_KINDS: dict[str, SchemaKind] = {
    "VirtualMachineInstancetype": "instancetype", "VirtualMachineClusterInstancetype": "instancetype",
    "VirtualMachinePreference": "preference", "VirtualMachineClusterPreference": "preference",
    "VirtualMachine": "vm",
}


def kind_of(obj: Any) -> SchemaKind | None:
    """The schema kind of an object (by its `kind`), or None for kinds the releases do not differ in."""
    return _KINDS.get(str(obj.get("kind") or "")) if isinstance(obj, dict) else None


def _drop(node: Any, keys: list[str]) -> None:
    if not keys or not isinstance(node, dict):
        return
    key, rest = keys[0], keys[1:]
    if key.endswith("[]"):
        items = node.get(key[:-2])
        for item in items if isinstance(items, list) else ():
            _drop(item, rest)
    elif not rest:
        node.pop(key, None)
    else:
        _drop(node.get(key), rest)


def prune_to_release(obj: Any, kind: SchemaKind, release: ReleaseProfile) -> Any:
    """`obj` as `release`'s API server stores it: a copy without the fields its schema lacks (`obj` itself
    when the release lacks none)."""
    paths = release.pruned_paths(kind)
    if not paths or not isinstance(obj, dict):
        return obj
    pruned = copy.deepcopy(obj)
    for path in paths:
        _drop(pruned, path.split("."))
    return pruned


def prune_object(obj: Any, release: ReleaseProfile) -> Any:
    """Any input object as `release`'s API server stores it: an instance type, preference or VM pruned to
    its schema, a ControllerRevision's `data` too; other kinds unchanged."""
    kind = kind_of(obj)
    if kind is not None:
        return prune_to_release(obj, kind, release)
    data = obj.get("data") if isinstance(obj, dict) else None
    data_kind = kind_of(data)
    if data_kind is None:
        return obj
    return {**obj, "data": prune_to_release(data, data_kind, release)}
