"""kubevirt.unknown_fields: the API server's strict field validation over plain data (schema in, paths out)."""
from __future__ import annotations

from instancetype_webhook.kubevirt.releases import PROFILES
from instancetype_webhook.kubevirt.unknown_fields import (
    release_schema,
    unknown_field_message,
    unknown_fields,
    without_paths,
)

SCHEMA = {"type": "object", "properties": {
    "apiVersion": {"type": "string"}, "kind": {"type": "string"}, "metadata": {"type": "object"},
    "spec": {"type": "object", "properties": {
        "cpu": {"type": "object", "properties": {"cores": {"type": "integer"}}},
        "disks": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
        "nodeSelector": {"type": "object", "additionalProperties": {"type": "string"}},
        "clock": {"type": "object", "x-kubernetes-preserve-unknown-fields": True,
                  "properties": {"utc": {"type": "object", "properties": {"offsetSeconds": {"type": "integer"}}}}},
        "template": {"type": "object", "properties": {
            "metadata": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}},
        "memory": {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": True},
    }},
}}


def obj(spec, **top):
    return {"apiVersion": "x/v1", "kind": "X", "metadata": {"name": "a"}, "spec": spec, **top}


def test_known_fields_are_not_reported():
    assert unknown_fields(obj({"cpu": {"cores": 2}, "disks": [{"name": "a"}], "memory": "1Gi"}), SCHEMA) == []


def test_a_typo_is_named_by_its_path_as_kubectl_does():
    assert unknown_fields(obj({"cpu": {"guest": 4, "cores": 1}}), SCHEMA) == ["spec.cpu.guest"]
    assert unknown_field_message("spec.cpu.guest") == 'unknown field "spec.cpu.guest"'


def test_list_items_carry_their_index_and_paths_come_sorted():
    found = unknown_fields(obj({"disks": [{"name": "a"}, {"name": "b", "bus": "virtio"}], "zeta": 1, "alpha": 2}),
                           SCHEMA)
    assert found == ["spec.alpha", "spec.disks[1].bus", "spec.zeta"]


def test_maps_and_preserve_unknown_subtrees_accept_anything():
    spec = {"nodeSelector": {"any/key": "v", "other": "w"},
            "template": {"metadata": {"labels": {"a": "b"}, "whatever": {"deep": [1, {"x": 2}]}}},
            "clock": {"timer": {"hpet": {}}, "anything": True}}
    assert unknown_fields(obj(spec), SCHEMA) == []


def test_known_properties_under_preserve_unknown_are_still_checked():
    assert unknown_fields(obj({"clock": {"utc": {"offsetSecond": 5}}}), SCHEMA) == ["spec.clock.utc.offsetSecond"]


def test_an_object_where_the_schema_has_a_scalar_has_only_unknown_keys():
    assert unknown_fields(obj({"memory": {"guest": "1Gi"}}), SCHEMA) == ["spec.memory.guest"]


def test_top_level_and_metadata_are_checked_as_the_api_server_does():
    found = unknown_fields({**obj({}), "specs": {}, "metadata": {"name": "a", "labelz": {},
                                                                  "ownerReferences": [{"uid": "1", "foo": 1}]}},
                           SCHEMA)
    assert found == ["metadata.labelz", "metadata.ownerReferences[0].foo", "specs"]
    assert unknown_fields({**obj({}), "metadata": {"labels": {"a": "b"}, "annotations": {"c": "d"},
                                                   "finalizers": ["x"], "creationTimestamp": None}}, SCHEMA) == []


def test_without_paths_drops_fields_and_leaves_the_given_schema_alone():
    smaller = without_paths(SCHEMA, ["spec.cpu.cores", "spec.disks[].name", "spec.nope.x"])
    assert unknown_fields(obj({"cpu": {"cores": 1}, "disks": [{"name": "a"}]}), smaller) == [
        "spec.cpu.cores", "spec.disks[0].name"]
    assert unknown_fields(obj({"cpu": {"cores": 1}, "disks": [{"name": "a"}]}), SCHEMA) == []
    assert smaller["properties"]["kind"] is SCHEMA["properties"]["kind"]  # shared, not copied


def test_release_schema_drops_what_the_release_lacks():
    vm_schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {"template": {
        "type": "object", "properties": {"spec": {"type": "object", "properties": {
            "serviceAccountName": {"type": "string"}, "domain": {"type": "object"}}}}}}}}}
    vm = {"spec": {"template": {"spec": {"serviceAccountName": "sa"}}}}
    assert unknown_fields(vm, release_schema(vm_schema, "vm", PROFILES["v1.9"])) == []
    assert unknown_fields(vm, release_schema(vm_schema, "vm", PROFILES["v1.8"])) == [
        "spec.template.spec.serviceAccountName"]
    vmi_schema = vm_schema["properties"]["spec"]["properties"]["template"]
    vmi = {"spec": {"serviceAccountName": "sa"}}
    assert unknown_fields(vmi, release_schema(vmi_schema, "vm", PROFILES["v1.8"], vmi=True)) == [
        "spec.serviceAccountName"]
    assert release_schema(vm_schema, None, PROFILES["v1.7"]) is vm_schema
