"""instancetype_webhook.patch: RFC 6902 correctness (checked with the jsonpatch library), escaping, idempotence,
minimality."""
from __future__ import annotations

import copy

import jsonpatch
import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from instancetype_webhook.patch import escape, make_patch, pointer

VM = {
    "apiVersion": "kubevirt.io/v1",
    "kind": "VirtualMachine",
    "metadata": {"name": "vm", "namespace": "ns", "annotations": {"a/b": "1", "x~y": "2"}, "labels": {"l": "v"}},
    "spec": {
        "runStrategy": "Halted",
        "instancetype": {"name": "u1.medium"},
        "template": {
            "spec": {
                "domain": {"devices": {}},
                "volumes": [{"name": "root", "containerDisk": {"image": "fedora"}},
                            {"name": "ci", "cloudInitNoCloud": {"userData": "#cloud-config\n" + "x" * 5000}}],
            }
        },
    },
}


def apply(doc, ops):
    return jsonpatch.apply_patch(doc, ops, in_place=False)


def test_escape_tokens():
    assert escape("kubevirt.io/size") == "kubevirt.io~1size"
    assert escape("a~b/c") == "a~0b~1c"
    assert pointer("metadata", "annotations", "a/b~") == "/metadata/annotations/a~1b~0"


def test_identity_is_empty():
    assert make_patch(VM, copy.deepcopy(VM)) == []


def test_targeted_ops_only_touch_changed_paths():
    flat = copy.deepcopy(VM)
    del flat["spec"]["instancetype"]
    flat["spec"]["template"]["spec"]["domain"]["cpu"] = {"sockets": 1, "cores": 1, "threads": 1}
    flat["spec"]["template"]["spec"]["volumes"][0]["containerDisk"]["imagePullPolicy"] = "Always"
    flat["metadata"]["annotations"]["new/key~"] = "v"
    ops = make_patch(VM, flat)
    assert ops == [
        {"op": "add", "path": "/metadata/annotations/new~1key~0", "value": "v"},
        {"op": "remove", "path": "/spec/instancetype"},
        {"op": "add", "path": "/spec/template/spec/domain/cpu", "value": {"sockets": 1, "cores": 1, "threads": 1}},
        {"op": "add", "path": "/spec/template/spec/volumes/0/containerDisk/imagePullPolicy", "value": "Always"},
    ]
    assert apply(VM, ops) == flat
    assert not any(op["path"] in ("/spec", "/metadata", "") for op in ops)


def test_untouched_key_order_survives():
    flat = copy.deepcopy(VM)
    flat["spec"]["template"]["spec"]["domain"]["memory"] = {"guest": "1Gi"}
    out = apply(VM, make_patch(VM, flat))
    assert list(out["metadata"]["annotations"]) == ["a/b", "x~y"]
    assert list(out["spec"]) == list(VM["spec"])
    volumes = out["spec"]["template"]["spec"]["volumes"]
    assert orjson.dumps(volumes) == orjson.dumps(VM["spec"]["template"]["spec"]["volumes"])


def test_json_types_are_distinguished_where_the_walk_descends():
    # The walk compares sub-objects with Python's `==` (which says True == 1); it only tells JSON
    # types apart where values differ elsewhere in the same object, which is where it descends.
    assert make_patch({"a": 1, "b": 0}, {"a": True, "b": 1}) == [
        {"op": "replace", "path": "/a", "value": True}, {"op": "replace", "path": "/b", "value": 1}]
    assert make_patch({"a": "1", "b": 0}, {"a": 1, "b": 1})[0] == {"op": "replace", "path": "/a", "value": 1}


def test_list_growth_and_shrink():
    assert make_patch({"l": [1, 2]}, {"l": [1, 2, 3]}) == [{"op": "add", "path": "/l/2", "value": 3}]
    assert make_patch({"l": [1, 2, 3, 4, 5]}, {"l": [1, 2, 3]}) == [
        {"op": "remove", "path": "/l/4"}, {"op": "remove", "path": "/l/3"}]
    # Everything differs: one replace of the list instead of one op per element.
    assert make_patch({"l": [1, 2, 3]}, {"l": [4, 5, 6]}) == [{"op": "replace", "path": "/l", "value": [4, 5, 6]}]


json_scalars = (st.none() | st.booleans() | st.integers(-5, 5) | st.floats(allow_nan=False, allow_infinity=False)
                | st.text(max_size=4))
keys = st.text(alphabet="ab/~.", min_size=0, max_size=3)
json_values = st.recursive(
    json_scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(keys, children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None)
@given(json_values, json_values)
def test_patch_applies_exactly(a, b):
    ops = make_patch(a, b)
    out = apply(a, ops) if ops else a
    assert out == b
    assert make_patch(out, b) == []


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(keys, json_values, max_size=5), st.dictionaries(keys, json_values, max_size=5))
def test_unchanged_keys_are_never_named(a, b):
    merged = {**a, **b}
    ops = make_patch(a, merged)
    unchanged = {k for k in a if k in b and orjson.dumps(a[k]) == orjson.dumps(b[k])}
    for op in ops:
        top = op["path"].split("/")[1].replace("~1", "/").replace("~0", "~")
        assert top not in unchanged
