"""parse_review's one-pass check of a well-formed review accepts exactly what the step-by-step checks accept."""
from __future__ import annotations

import copy

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from instancetype_webhook.admission import envelope as rv

VALUES = st.sampled_from([None, "", "x", "CREATE", "UPDATE", "DELETE", "CONNECT", "AdmissionReview",
                          "admission.k8s.io/v1", "admission.k8s.io/v1beta1", 0, 1.5, True, False, [], {},
                          {"metadata": {"name": "vm"}}])
REQUEST_KEYS = ["uid", "kind", "operation", "namespace", "name", "object", "oldObject", "dryRun"]
GVK_KEYS = ["group", "version", "kind"]


# specific: exactly the keys parse_review checks (REQUEST_KEYS), which the properties below remove one by one
def base() -> dict:
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {"uid": "u", "kind": {"group": "kubevirt.io", "version": "v1", "kind": "VirtualMachine"},
                        "operation": "CREATE", "namespace": "ns", "name": "vm", "object": {"spec": {}},
                        "oldObject": None, "dryRun": False}}


@settings(max_examples=400, deadline=None)
@given(edits=st.lists(st.tuples(st.sampled_from(["top:apiVersion", "top:kind", "top:request",
                                                  *(f"req:{k}" for k in REQUEST_KEYS),
                                                  *(f"gvk:{k}" for k in GVK_KEYS)]),
                                st.one_of(VALUES, st.just("<delete>"))), max_size=3))
def test_every_edit_is_a_review_or_an_error_naming_a_field(edits):
    doc = base()
    for where, value in edits:
        scope, key = where.split(":")
        request = doc.get("request") if isinstance(doc.get("request"), dict) else {}
        target = doc if scope == "top" else request if scope == "req" else request.get("kind")
        if not isinstance(target, dict):
            continue
        if value == "<delete>":
            target.pop(key, None)
        else:
            target[key] = copy.deepcopy(value)  # the sampled objects are shared between examples
    try:
        review = rv.parse_review(orjson.dumps(doc))
    except rv.ReviewError as exc:
        assert exc.field in ("", "kind", "apiVersion", "request", *(f"request.{k}" for k in REQUEST_KEYS),
                             *(f"request.kind.{k}" for k in GVK_KEYS)), exc.field
        assert str(exc) and (exc.field in str(exc) or not exc.field)
    else:
        assert review == doc and review["kind"] == "AdmissionReview" and isinstance(review["request"]["uid"], str)


_JSON_TREES = st.recursive(st.none() | st.integers(0, 3) | st.text(max_size=2),
                           lambda children: st.lists(children, max_size=3)
                           | st.dictionaries(st.text(max_size=2), children, max_size=3), max_leaves=30)


@given(doc=st.dictionaries(st.text(max_size=2), _JSON_TREES, max_size=3), limit=st.integers(0, 12))
@settings(max_examples=300, deadline=None)
def test_the_nesting_check_agrees_with_a_plain_recursion(doc: dict, limit: int):
    """parse_review's walk answers as the recursive reference below (the tests' own)."""
    assert rv._nests_within(doc, limit) == (_depth(doc) <= limit)


def _depth(node: object) -> int:
    children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else None
    if children is None:
        return 0
    return 1 + max((_depth(child) for child in children), default=0)


@pytest.mark.parametrize("levels", [1, 5, 40])
def test_nesting_at_the_limit_passes_and_one_more_is_refused(levels: int):
    nested: object = "leaf"
    for level in range(levels):
        nested = {"n": nested} if level % 2 else [nested]
    doc = base()
    doc["request"]["object"]["spec"]["deep"] = nested
    body, depth = orjson.dumps(doc), _depth(doc)
    assert rv.parse_review(body, max_depth=depth)
    with pytest.raises(rv.ReviewError, match="deeper than"):
        rv.parse_review(body, max_depth=depth - 1)


# --- the answer ----------------------------------------------------------------------------------------------

def test_response_of_an_allowed_review_carries_uid_patch_and_short_warnings():
    import base64

    from instancetype_webhook.kubevirt.causes import Verdict

    review = base()
    long = "w" * 200
    body = orjson.loads(rv.response(review, Verdict.allow(["short", long]), [{"op": "remove", "path": "/a"}]))
    assert body["apiVersion"] == "admission.k8s.io/v1" and body["kind"] == "AdmissionReview"
    out = body["response"]
    assert out["uid"] == "u" and out["allowed"] is True and "status" not in out
    assert out["patchType"] == "JSONPatch"
    assert orjson.loads(base64.b64decode(out["patch"])) == [{"op": "remove", "path": "/a"}]
    assert out["warnings"] == ["short", "w" * 117 + "..."] and len(out["warnings"][1]) == rv.MAX_WARNING
    bare = orjson.loads(rv.response(review, Verdict.allow(), []))["response"]
    assert bare == {"uid": "u", "allowed": True}  # no empty patch, no empty warnings


def test_a_denial_carries_upstreams_status():
    from instancetype_webhook.kubevirt.causes import Cause

    review = base()
    review["apiVersion"] = "admission.k8s.io/v1beta1"
    cause = Cause("FieldValueInvalid", "bad", "spec.x")
    body = orjson.loads(rv.response(review, rv.deny("bad", 422, [cause])))
    assert body["apiVersion"] == "admission.k8s.io/v1beta1"
    assert body["response"]["status"] == {"code": 422, "message": "bad", "reason": "Invalid",
                                          "details": {"causes": [{"reason": "FieldValueInvalid", "message": "bad",
                                                                  "field": "spec.x"}]}}
    plain = orjson.loads(rv.response(review, rv.deny("not found")))["response"]
    assert plain["allowed"] is False and plain["status"] == {"code": 400, "message": "not found"}


def test_subject_is_the_object_or_a_review_error():
    request = base()["request"]
    assert rv.subject(request) == {"spec": {}}
    request["object"] = None
    with pytest.raises(rv.ReviewError) as err:
        rv.subject(request)
    assert err.value.field == "request.object" and orjson.loads(err.value.body())["field"] == "request.object"
