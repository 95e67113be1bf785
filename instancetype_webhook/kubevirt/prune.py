"""What a release's API server does to an object its schema partly lacks: the unknown fields are pruned.

Used at the input boundary, for objects that are not the cluster's own (files given to the CLI, the
embedded catalogue, the conformance inputs): a live cluster's API server has pruned them already. And where a
release other than the cluster's answers (an upgrade preview, the playground's comparison): `PrunedSource` serves
the cluster's objects as that release's API server would (it prunes on write and when it reads from etcd).
The paths come from `releases.SCHEMA_ADDED`; `a.b[].c` walks every item of the list `b`.
"""
from __future__ import annotations

import copy
from typing import Any, Final

from instancetype_webhook.kubevirt.releases import ReleaseProfile, SchemaKind
from instancetype_webhook.kubevirt.source import Source

__all__ = ["PrunedSource", "kind_of", "prune_object", "prune_to_release"]

_KINDS: Final[dict[str, SchemaKind]] = {
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


VMI: Final = "VirtualMachineInstance"


def prune_to_release(obj: Any, kind: SchemaKind, release: ReleaseProfile, vmi: bool = False) -> Any:
    """`obj` as `release`'s API server stores it: a copy without the fields its schema lacks (`obj` itself
    when the release lacks none). `vmi`: `obj` is a VirtualMachineInstance, pruned of the VM's template paths."""
    paths = release.pruned_paths(kind, vmi)
    if not paths or not isinstance(obj, dict):
        return obj
    pruned = copy.deepcopy(obj)
    for path in paths:
        _drop(pruned, path.split("."))
    return pruned


def prune_object(obj: Any, release: ReleaseProfile) -> Any:
    """Any input object as `release`'s API server stores it: an instance type, preference, VM or VMI pruned to
    its schema, a ControllerRevision's `data` too; other kinds unchanged."""
    kind = kind_of(obj)
    if kind is not None:
        return prune_to_release(obj, kind, release)
    if isinstance(obj, dict) and obj.get("kind") == VMI:
        return prune_to_release(obj, "vm", release, vmi=True)
    data = obj.get("data") if isinstance(obj, dict) else None
    data_kind = kind_of(data)
    if data_kind is None:
        return obj
    return {**obj, "data": prune_to_release(data, data_kind, release)}


class PrunedSource:
    """`source` as `release`'s API server serves it: each instance type, preference and revision pruned to that
    release's schema (a copy, made once per object the source holds; `source`'s objects are not changed).
    Everything else (the default namespace, the running VMIs, a cache-only mode) is `source`'s own."""

    def __init__(self, source: Source, release: ReleaseProfile):
        self.source, self.release = source, release
        self._pruned: dict[int, tuple[Any, Any]] = {}  # id(object) -> (object, its pruned copy)

    def _as_release(self, obj: Any) -> Any:
        if obj is None:
            return None
        seen = self._pruned.get(id(obj))
        if seen is not None and seen[0] is obj:  # the same object (ids are reused once an object is gone)
            return seen[1]
        pruned = prune_object(obj, self.release)
        self._pruned[id(obj)] = (obj, pruned)
        return pruned

    def get(self, kind: str, name: str, namespace: str | None = None) -> dict[str, Any] | None:
        found: dict[str, Any] | None = self._as_release(self.source.get(kind, name, namespace))
        return found

    def get_revision(self, name: str, namespace: str) -> dict[str, Any] | None:
        found: dict[str, Any] | None = self._as_release(self.source.get_revision(name, namespace))
        return found

    def __getattr__(self, name: str) -> Any:
        return getattr(self.source, name)
