"""The fields an object's schema does not have, as the API server's strict field validation names them.

Plain data in, plain data out (no I/O): a CRD version's `openAPIV3Schema` and an object in, the paths of the
fields the schema lacks out, spelt as kubectl prints them (`unknown field "spec.template.spec.domain.cpu.guest"`):
keys joined by `.`, list items as `[i]`. The walk is the API server's structural pruning
(k8s.io/apiextensions-apiserver pruning): a key that is neither a property nor covered by
`additionalProperties` is unknown, unless its object says `x-kubernetes-preserve-unknown-fields` (then
anything goes below that key; known properties beside it are still checked). An object's own `metadata` is
decoded as an ObjectMeta, whose unknown fields are reported too (`metadata.labelz`).

`release_schema` is a schema as an older release has it: the newer schema without the fields
`releases.SCHEMA_ADDED` says that release lacks (the same list `prune` drops from inputs), so a field only a
newer release has is unknown to the older one.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from instancetype_webhook.kubevirt.releases import ReleaseProfile, SchemaKind

__all__ = ["OBJECT_META", "release_schema", "unknown_field_message", "unknown_fields", "without_paths"]

Schema = Mapping[str, Any]

_STRING_MAP: Final[Schema] = {"type": "object", "additionalProperties": {"type": "string"}}
_STRINGS: Final[Schema] = {"type": "array", "items": {"type": "string"}}
# metav1.ObjectMeta's JSON fields (what the API server decodes `metadata` into, strictly).
OBJECT_META: Final[Schema] = {"type": "object", "properties": {
    "name": {}, "generateName": {}, "namespace": {}, "selfLink": {}, "uid": {}, "resourceVersion": {},
    "generation": {}, "creationTimestamp": {}, "deletionTimestamp": {}, "deletionGracePeriodSeconds": {},
    "labels": _STRING_MAP, "annotations": _STRING_MAP, "finalizers": _STRINGS,
    "ownerReferences": {"type": "array", "items": {"type": "object", "properties": {
        "apiVersion": {}, "kind": {}, "name": {}, "uid": {}, "controller": {}, "blockOwnerDeletion": {}}}},
    "managedFields": {"type": "array", "items": {"type": "object", "properties": {
        "manager": {}, "operation": {}, "apiVersion": {}, "time": {}, "fieldsType": {},
        "fieldsV1": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}, "subresource": {}}}},
}}
_TYPE_META: Final = ("apiVersion", "kind")


def _key(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _walk(value: Any, schema: Schema | None, path: str, found: list[str]) -> None:
    """Append to `found` the paths under `value` that `schema` lacks (None: a place no schema describes)."""
    if isinstance(value, list):
        items = schema.get("items") if schema is not None else None
        for index, item in enumerate(value):
            _walk(item, items if isinstance(items, Mapping) else None, f"{path}[{index}]", found)
        return
    if not isinstance(value, Mapping):
        return
    if schema is None:  # an object where the schema says nothing: every key of it is unknown
        found.extend(_key(path, str(key)) for key in value)
        return
    properties = schema.get("properties")
    properties = properties if isinstance(properties, Mapping) else {}
    additional = schema.get("additionalProperties")
    preserve = schema.get("x-kubernetes-preserve-unknown-fields") is True
    for key, item in value.items():
        name = str(key)
        if name in properties:
            known = properties[name]
            _walk(item, known if isinstance(known, Mapping) else {}, _key(path, name), found)
        elif isinstance(additional, Mapping):
            _walk(item, additional, _key(path, name), found)
        elif additional is True or preserve:
            continue
        else:
            found.append(_key(path, name))


def unknown_fields(obj: Mapping[str, Any], schema: Schema) -> list[str]:
    """The paths of the fields of `obj` (a whole object: apiVersion, kind, metadata, ...) that `schema` (its
    CRD version's openAPIV3Schema) does not have, sorted as the API server reports them."""
    found: list[str] = []
    properties = schema.get("properties")
    properties = properties if isinstance(properties, Mapping) else {}
    for key, value in obj.items():
        if key in _TYPE_META:
            continue
        if key == "metadata":
            _walk(value, OBJECT_META, "metadata", found)
        elif key in properties:
            known = properties[key]
            _walk(value, known if isinstance(known, Mapping) else {}, str(key), found)
        elif schema.get("x-kubernetes-preserve-unknown-fields") is not True:
            found.append(str(key))
    return sorted(found)


def unknown_field_message(path: str) -> str:
    """How the API server words one unknown field (kubectl prints it after `Warning: `)."""
    return f'unknown field "{path}"'


def _without(schema: Schema, keys: list[str]) -> Schema:
    """`schema` without the property `keys` names (`[]` steps into a list's items); copies only the path."""
    if not keys:
        return schema
    key, rest = keys[0], keys[1:]
    name, is_list = (key[:-2], True) if key.endswith("[]") else (key, False)
    properties = schema.get("properties")
    if not isinstance(properties, Mapping) or name not in properties:
        return schema
    if not rest and not is_list:
        return {**schema, "properties": {k: v for k, v in properties.items() if k != name}}
    child = properties[name]
    if not isinstance(child, Mapping):
        return schema
    if is_list:
        items = child.get("items")
        if not isinstance(items, Mapping):
            return schema
        child = {**child, "items": _without(items, rest)}
    else:
        child = _without(child, rest)
    return {**schema, "properties": {**properties, name: child}}


def without_paths(schema: Schema, paths: Iterable[str]) -> Schema:
    """`schema` without the fields at `paths` (`spec.a[].b`: `b` of every item of the list `a`); the rest of
    the schema is shared, not copied."""
    for path in paths:
        schema = _without(schema, path.split("."))
    return schema


def release_schema(schema: Schema, kind: SchemaKind | None, release: ReleaseProfile, vmi: bool = False) -> Schema:
    """A schema as `release` has it, given the newest one (main's): without the fields `SCHEMA_ADDED` says
    `release` lacks. `kind` is the schema kind (`vm`, `instancetype`, `preference`; None: no known
    differences); `vmi` reads the VM's paths under spec.template as a VirtualMachineInstance's."""
    if kind is None:
        return schema
    return without_paths(schema, release.pruned_paths(kind, vmi))
