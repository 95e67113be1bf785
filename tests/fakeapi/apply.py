"""Server-side apply for the fake API server: a structured-merge-diff subset, enough for GitOps-style tests.

What is implemented (and how a real kube-apiserver differs):
- Field sets are sets of paths. A path step is `("f", key)` for a map key, `("k", {merge keys})` for an item of
  a list of maps the schema declares `x-kubernetes-list-type: map` (by its `x-kubernetes-list-map-keys`) and
  `("v", value)` for an item of a `set` list. Every other list is atomic (a leaf), as for a CRD without list
  types; maps are granular. The schema is the resource's CRD `openAPIV3Schema` (virtualmachines: the in-tree
  KubeVirt CRD); a resource without one is all granular maps and atomic lists.
- `managedFields` entries `{manager, operation: Apply|Update, apiVersion, time, fieldsType: FieldsV1, fieldsV1}`
  with FieldsV1 encoded as the real server does (`f:<key>`, `k:<json>`, `v:<json>`, `.` for a list item).
- Apply (`PATCH application/apply-patch+yaml?fieldManager=M[&force=true]`): the applied set is every leaf and
  list item of the configuration (apiVersion, kind, metadata.name/namespace and status excluded). A leaf
  another manager owns whose live value differs is a conflict: `409 Conflict` with the real message and one
  `FieldManagerConflict` cause per field, unless `force`, which takes the fields over. Fields the manager
  applied before and no longer applies are removed unless another manager owns them. The configuration is
  merged into the live object (maps by key, map-lists by merge keys, atomic lists and scalars replaced). An
  apply to a missing object creates it.
- The entry's `time` (seconds, as the real server) is written only when the apply changes the object or the
  manager's set; an apply that changes nothing keeps `managedFields` as they are, so the write is a no-op.
- Update operations (POST/PUT/merge/JSON patches) are recorded only for requests that name a `fieldManager`
  or for objects already under managed fields: the fields the write changed go to that manager (Update).
- Not implemented: what mutating admission changes during an apply is not attributed to anyone (the real
  server's bookkeeping of webhook changes); `managedFields` written by the client are ignored; no
  `x-kubernetes-map-type: atomic`, no ownership of status through /status.
"""
from __future__ import annotations

import json
import time
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

Step = tuple[str, Any]
FieldPath = tuple[Step, ...]
IGNORED_TOP = ("apiVersion", "kind", "status")
IGNORED_META = ("name", "namespace", "resourceVersion", "managedFields", "uid", "creationTimestamp", "generation")
CRDS = Path(__file__).resolve().parents[1] / "data" / "shared" / "kubevirt-crds"


class ApplyConflict(Exception):
    def __init__(self, conflicts: list[tuple[str, str, str]]):  # (manager, apiVersion, field)
        super().__init__(conflicts)
        self.conflicts = conflicts


@lru_cache(maxsize=8)
def crd_schema(plural: str, group: str, version: str) -> dict[str, Any] | None:
    path = CRDS / f"{plural}.{group}.yaml"
    if not path.exists():
        return None
    doc = yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    for v in doc["spec"]["versions"]:
        if v["name"] == version:
            return v["schema"]["openAPIV3Schema"]
    return None


def _child(schema: dict[str, Any] | None, key: Any) -> dict[str, Any] | None:
    if not schema:
        return None
    if isinstance(key, int):
        return schema.get("items")
    props = schema.get("properties") or {}
    if key in props:
        return props[key]
    extra = schema.get("additionalProperties")
    return extra if isinstance(extra, dict) else None


def _list_kind(schema: dict[str, Any] | None) -> tuple[str, tuple[str, ...]]:
    if not schema:
        return "atomic", ()
    kind = schema.get("x-kubernetes-list-type", "atomic")
    return kind, tuple(schema.get("x-kubernetes-list-map-keys") or ())


def _item_key(item: Any, keys: tuple[str, ...]) -> tuple[tuple[str, Any], ...]:
    """A map-list item's merge keys, hashable: ((key, value), ...)."""
    return tuple(sorted((k, item.get(k)) for k in keys if isinstance(item, dict) and k in item))


def _is_item(item: Any, key: tuple[tuple[str, Any], ...]) -> bool:
    return isinstance(item, dict) and all(item.get(k) == v for k, v in key)


# -- field sets ----------------------------------------------------------------------------------------------


def field_set(obj: dict[str, Any], schema: dict[str, Any] | None) -> set[FieldPath]:
    """Every leaf and list item of `obj` (an apply configuration or a live object), as paths."""
    out: set[FieldPath] = set()
    for key, value in obj.items():
        if key in IGNORED_TOP:
            continue
        if key == "metadata" and isinstance(value, dict):
            meta = {k: v for k, v in value.items() if k not in IGNORED_META}
            if meta:
                _walk(meta, (("f", "metadata"),), _child(schema, "metadata"), out)
            continue
        _walk(value, (("f", key),), _child(schema, key), out)
    return out


def _walk(value: Any, path: FieldPath, schema: dict[str, Any] | None, out: set[FieldPath]) -> None:
    if isinstance(value, dict) and value:
        for key, item in value.items():
            _walk(item, (*path, ("f", key)), _child(schema, key), out)
        return
    if isinstance(value, list):
        kind, keys = _list_kind(schema)
        if kind == "map" and keys:
            for item in value:
                item_path = (*path, ("k", _item_key(item, keys)))
                out.add(item_path)
                if isinstance(item, dict):
                    for key, sub in item.items():
                        _walk(sub, (*item_path, ("f", key)), _child(_child(schema, 0), key), out)
            return
        if kind == "set":
            out.update((*path, ("v", item)) for item in value)
            return
    out.add(path)


def to_fields_v1(paths: set[FieldPath]) -> dict[str, Any]:
    root: dict[str, Any] = {}
    for path in sorted(paths, key=_sort_key):
        node = root
        for i, (kind, key) in enumerate(path):
            raw = dict(key) if kind == "k" else key
            name = f"f:{key}" if kind == "f" else f"{kind}:{json.dumps(raw, separators=(',', ':'), sort_keys=True)}"
            node = node.setdefault(name, {})
            if kind in ("k", "v") and i == len(path) - 1:
                node.setdefault(".", {})
    return root


def from_fields_v1(fields: dict[str, Any], prefix: FieldPath = ()) -> set[FieldPath]:
    out: set[FieldPath] = set()
    for name, sub in fields.items():
        if name == ".":
            out.add(prefix)
            continue
        kind, _, raw = name.partition(":")
        decoded = raw if kind == "f" else json.loads(raw)
        step: Step = (kind, tuple(sorted(decoded.items())) if kind == "k" else decoded)
        path = (*prefix, step)
        if sub:
            out.update(from_fields_v1(sub, path))
        elif kind == "f":
            out.add(path)
        else:
            out.add(path)
    return out


def _sort_key(path: FieldPath) -> str:
    return json.dumps([[k, v] for k, v in path], sort_keys=True, default=str)


def field_string(path: FieldPath) -> str:
    """`.spec.template.spec.domain` / `.spec.list[name="x"]`, as the real conflict message prints it."""
    out = ""
    for kind, key in path:
        if kind == "f":
            out += f".{key}"
        elif kind == "k":
            out += "[" + ",".join(f"{k}={json.dumps(v)}" for k, v in key) + "]"
        else:
            out += f"[={json.dumps(key)}]"
    return out


# -- values at paths -----------------------------------------------------------------------------------------

_MISSING = object()


def value_at(obj: Any, path: FieldPath) -> Any:
    node = obj
    for kind, key in path:
        if kind == "f":
            if not isinstance(node, dict) or key not in node:
                return _MISSING
            node = node[key]
        elif kind == "k":
            if not isinstance(node, list):
                return _MISSING
            found = [item for item in node if _is_item(item, key)]
            if not found:
                return _MISSING
            node = found[0]
        else:
            return key if isinstance(node, list) and key in node else _MISSING
    return node


def _remove(obj: dict[str, Any], path: FieldPath) -> None:
    parents: list[tuple[Any, Step]] = []
    node: Any = obj
    for step in path[:-1]:
        nxt = value_at(node, (step,))
        if nxt is _MISSING:
            return
        parents.append((node, step))
        node = nxt
    _drop(node, path[-1])
    # empty maps left behind by the removal go too
    for parent, step in reversed(parents):
        child = value_at(parent, (step,))
        if isinstance(child, dict) and not child and step[0] == "f":
            _drop(parent, step)
        else:
            break


def _drop(node: Any, step: Step) -> None:
    kind, key = step
    if kind == "f" and isinstance(node, dict):
        node.pop(key, None)
    elif kind == "k" and isinstance(node, list):
        node[:] = [i for i in node if not _is_item(i, key)]
    elif kind == "v" and isinstance(node, list):
        node[:] = [i for i in node if i != key]


def merge(live: Any, config: Any, schema: dict[str, Any] | None) -> Any:
    """The configuration merged into the live value: maps by key, map-lists by merge keys, else replaced."""
    if isinstance(config, dict) and isinstance(live, dict):
        out = dict(live)
        for key, value in config.items():
            out[key] = merge(live.get(key), value, _child(schema, key)) if key in live else value
        return out
    if isinstance(config, list) and isinstance(live, list):
        kind, keys = _list_kind(schema)
        if kind == "map" and keys:
            out_list = list(live)
            for item in config:
                key = _item_key(item, keys)
                at = [i for i, old in enumerate(out_list) if _item_key(old, keys) == key]
                if at:
                    out_list[at[0]] = merge(out_list[at[0]], item, _child(schema, 0))
                else:
                    out_list.append(item)
            return out_list
        if kind == "set":
            return list(live) + [i for i in config if i not in live]
    return config


# -- the operations ------------------------------------------------------------------------------------------


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _entries(obj: dict[str, Any] | None) -> list[dict[str, Any]]:
    return [dict(e) for e in (((obj or {}).get("metadata") or {}).get("managedFields") or [])]


def apply(live: dict[str, Any] | None, config: dict[str, Any], manager: str, force: bool,
          schema: dict[str, Any] | None, api_version: str) -> dict[str, Any]:
    """The object after `manager` applies `config` to `live` (None: create), with its managedFields.
    Raises ApplyConflict."""
    entries = _entries(live)
    applied = field_set(config, schema)
    mine = next((e for e in entries if e.get("manager") == manager and e.get("operation") == "Apply"), None)
    before = from_fields_v1(mine.get("fieldsV1") or {}) if mine else set()
    base = json.loads(json.dumps(live)) if live is not None else {}
    conflicts: list[tuple[str, str, str]] = []
    for entry in entries:
        if entry is mine:
            continue
        owned = from_fields_v1(entry.get("fieldsV1") or {}) & applied
        clashing = {p for p in owned if value_at(base, p) != value_at(config, p) and value_at(base, p) is not _MISSING}
        if clashing and not force:
            conflicts += [(entry["manager"], entry.get("apiVersion", api_version), field_string(p))
                          for p in sorted(clashing, key=_sort_key)]
        elif owned and force:
            entry["fieldsV1"] = to_fields_v1(from_fields_v1(entry.get("fieldsV1") or {}) - owned)
    if conflicts:
        raise ApplyConflict(conflicts)
    others = set().union(*(from_fields_v1(e.get("fieldsV1") or {}) for e in entries if e is not mine))
    for path in sorted(before - applied - others, key=lambda p: -len(p)):
        _remove(base, path)
    body = {k: v for k, v in config.items() if k not in ("status",)}
    if isinstance(body.get("metadata"), dict):
        body["metadata"] = {k: v for k, v in body["metadata"].items() if k not in ("managedFields", "resourceVersion")}
    merged = merge(base, body, schema)
    unchanged = live is not None and _without_managed(merged) == _without_managed(live) and applied == before
    if unchanged:
        return merged
    new_entry = {"manager": manager, "operation": "Apply", "apiVersion": api_version, "time": now(),
                 "fieldsType": "FieldsV1", "fieldsV1": to_fields_v1(applied)}
    kept = [e for e in entries if e is not mine and e.get("fieldsV1")]
    merged.setdefault("metadata", {})["managedFields"] = [*kept, new_entry] if mine is None else [
        new_entry if e is mine else e for e in entries if e is mine or e.get("fieldsV1")]
    return merged


def record_update(old: dict[str, Any] | None, new: dict[str, Any], manager: str | None,
                  schema: dict[str, Any] | None, api_version: str) -> dict[str, Any]:
    """`new` with an Update entry for the fields this write changed (see the module docstring for when)."""
    entries = _entries(old)
    if manager is None and not entries:
        return new
    manager = manager or "unknown"
    after = field_set(new, schema)
    changed = {p for p in after if old is None or value_at(old, p) != value_at(new, p)}
    gone = field_set(old, schema) - after if old is not None else set()
    if not changed and not gone:
        new.setdefault("metadata", {})["managedFields"] = entries
        if not entries:
            new["metadata"].pop("managedFields")
        return new
    out: list[dict[str, Any]] = []
    mine: dict[str, Any] | None = None
    for entry in entries:
        fields = from_fields_v1(entry.get("fieldsV1") or {}) - gone
        if entry.get("manager") == manager and entry.get("operation") == "Update":
            mine = entry
            fields |= changed
        else:
            fields -= changed
        if fields:
            out.append({**entry, "fieldsV1": to_fields_v1(fields)})
    if mine is None:
        out.append({"manager": manager, "operation": "Update", "apiVersion": api_version, "time": now(),
                    "fieldsType": "FieldsV1", "fieldsV1": to_fields_v1(changed)})
    else:
        for entry in out:
            if entry.get("manager") == manager and entry.get("operation") == "Update":
                entry["time"] = now()
    new.setdefault("metadata", {})["managedFields"] = out
    return new


def _without_managed(obj: dict[str, Any]) -> dict[str, Any]:
    meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k != "managedFields"}
    return {**obj, "metadata": meta}


def conflict_message(conflicts: list[tuple[str, str, str]]) -> str:
    if len(conflicts) == 1:
        manager, version, field = conflicts[0]
        return f'Apply failed with 1 conflict: conflict with "{manager}" using {version}: {field}'
    lines = "\n".join(f'- conflict with "{m}" using {v}: {f}' for m, v, f in conflicts)
    return f"Apply failed with {len(conflicts)} conflicts:\n{lines}"
