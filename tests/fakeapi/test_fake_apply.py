"""The fake API server's server-side apply subset (tests/fakeapi/apply.py) on its own: field sets in
FieldsV1, merges by the schema's list types, removal of what a manager stops applying, conflicts."""
from __future__ import annotations

import pytest

from tests.fakeapi import apply as fake_apply

SCHEMA = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
    "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
              "items": {"type": "object"}},
    "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
    "args": {"type": "array", "items": {"type": "string"}}}}}}


def obj(spec: dict, **meta) -> dict:
    return {"apiVersion": "v1", "kind": "Thing", "metadata": {"name": "t", **meta}, "spec": spec}


def test_field_sets_are_fields_v1_as_the_real_server_writes_them():
    fields = fake_apply.field_set(obj({"ports": [{"name": "http", "port": 80}], "tags": ["a"], "args": ["x"]},
                                      labels={"app": "t"}), SCHEMA)
    assert fake_apply.to_fields_v1(fields) == {
        "f:metadata": {"f:labels": {"f:app": {}}},
        "f:spec": {"f:args": {}, "f:ports": {'k:{"name":"http"}': {".": {}, "f:name": {}, "f:port": {}}},
                   "f:tags": {'v:"a"': {".": {}}}},
    }
    assert fake_apply.from_fields_v1(fake_apply.to_fields_v1(fields)) == fields


def test_merge_by_the_schemas_list_types():
    live = obj({"ports": [{"name": "http", "port": 80}, {"name": "ssh", "port": 22}],
                "tags": ["a"], "args": ["x", "y"]})
    config = obj({"ports": [{"name": "http", "port": 8080}], "tags": ["b"], "args": ["z"]})
    merged = fake_apply.merge(live, config, SCHEMA)["spec"]
    assert merged["ports"] == [{"name": "http", "port": 8080}, {"name": "ssh", "port": 22}]  # by merge key
    assert merged["tags"] == ["a", "b"]  # a set
    assert merged["args"] == ["z"]  # atomic: replaced


def test_a_field_the_manager_stops_applying_goes_unless_another_owns_it():
    first = fake_apply.apply(None, obj({"a": 1, "b": 2}), "m1", False, SCHEMA, "v1")
    updated = fake_apply.record_update(first, {**first, "spec": {**first["spec"], "c": 3}}, "m2", SCHEMA, "v1")
    second = fake_apply.apply(updated, obj({"a": 1}), "m1", False, SCHEMA, "v1")
    assert second["spec"] == {"a": 1, "c": 3}


def test_a_differing_value_owned_by_another_manager_conflicts_unless_forced():
    first = fake_apply.apply(None, obj({"a": 1}), "m1", False, SCHEMA, "v1")
    with pytest.raises(fake_apply.ApplyConflict) as caught:
        fake_apply.apply(first, obj({"a": 2}), "m2", False, SCHEMA, "v1")
    assert caught.value.conflicts == [("m1", "v1", ".spec.a")]
    same = fake_apply.apply(first, obj({"a": 1}), "m2", False, SCHEMA, "v1")  # same value: shared, no conflict
    assert {e["manager"] for e in same["metadata"]["managedFields"]} == {"m1", "m2"}
    forced = fake_apply.apply(first, obj({"a": 2}), "m2", True, SCHEMA, "v1")
    assert forced["spec"] == {"a": 2} and [e["manager"] for e in forced["metadata"]["managedFields"]] == ["m2"]
