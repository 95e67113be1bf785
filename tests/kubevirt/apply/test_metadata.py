"""Instance type nodeSelector, schedulerName and annotations (instancetype_webhook.kubevirt.apply.metadata)."""
from __future__ import annotations

from instancetype_webhook.kubevirt.apply.metadata import (
    apply_instancetype_annotations,
    apply_node_selector,
    apply_scheduler_name,
)
from tests.kit.kubevirt import BASE, fields


def test_node_selector_is_copied_and_any_vm_selector_conflicts():
    wanted = {"zone": "a"}
    spec = {}
    assert apply_node_selector(BASE, {"nodeSelector": wanted}, spec) == []
    assert spec == {"nodeSelector": {"zone": "a"}} and spec["nodeSelector"] is not wanted
    empty = {"nodeSelector": {}}
    assert fields(apply_node_selector(BASE, {"nodeSelector": wanted}, empty)) == [f"{BASE}.nodeSelector"]
    assert empty == {"nodeSelector": {}}


def test_an_empty_instancetype_selector_is_not_printed_but_still_conflicts():
    spec = {}
    assert apply_node_selector(BASE, {"nodeSelector": {}}, spec) == [] and spec == {}
    assert fields(apply_node_selector(BASE, {"nodeSelector": {}}, {"nodeSelector": {"x": "y"}})) == [
        f"{BASE}.nodeSelector"]
    assert apply_node_selector(BASE, {}, {"nodeSelector": {"x": "y"}}) == []


def test_scheduler_name_only_conflicts_with_a_non_empty_vm_name():
    spec = {"schedulerName": ""}
    assert apply_scheduler_name(BASE, {"schedulerName": "s"}, spec) == [] and spec == {"schedulerName": "s"}
    assert fields(apply_scheduler_name("spec", {"schedulerName": "t"}, spec)) == ["spec.schedulerName"]
    assert spec == {"schedulerName": "s"}
    assert apply_scheduler_name(BASE, {"schedulerName": ""}, spec) == [] and spec == {"schedulerName": "s"}


def test_annotations_add_missing_keys_and_the_same_value_is_fine():
    metadata = {"annotations": {"a": "1"}}
    assert apply_instancetype_annotations({"a": "1", "b": "2"}, metadata) == []
    assert metadata == {"annotations": {"a": "1", "b": "2"}}
    bare = {}
    assert apply_instancetype_annotations({"c": "3"}, bare) == [] and bare == {"annotations": {"c": "3"}}
    assert apply_instancetype_annotations(None, bare) == [] and apply_instancetype_annotations({}, bare) == []


def test_annotation_conflicts_are_one_per_key_sorted_and_write_nothing():
    metadata = {"annotations": {"z": "0", "a": "0"}}
    causes = apply_instancetype_annotations({"z": "1", "a": "1", "new": "1"}, metadata)
    assert fields(causes) == ["annotations.a", "annotations.z"]
    assert metadata == {"annotations": {"z": "0", "a": "0"}}
