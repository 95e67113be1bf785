"""parse_review's one-pass check of a well-formed review accepts exactly what the step-by-step checks accept."""
from __future__ import annotations

import copy

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.server import review as rv

VALUES = st.sampled_from([None, "", "x", "CREATE", "UPDATE", "DELETE", "CONNECT", "AdmissionReview",
                          "admission.k8s.io/v1", "admission.k8s.io/v1beta1", 0, 1.5, True, False, [], {},
                          {"metadata": {"name": "vm"}}])
REQUEST_KEYS = ["uid", "kind", "operation", "namespace", "name", "object", "oldObject", "dryRun"]
GVK_KEYS = ["group", "version", "kind"]


def base() -> dict:
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {"uid": "u", "kind": {"group": "kubevirt.io", "version": "v1", "kind": "VirtualMachine"},
                        "operation": "CREATE", "namespace": "ns", "name": "vm", "object": {"spec": {}},
                        "oldObject": None, "dryRun": False}}


def slow(body: bytes, monkeypatch: pytest.MonkeyPatch) -> object:
    with monkeypatch.context() as m:
        m.setattr(rv, "_well_formed", lambda doc: False)
        try:
            return rv.parse_review(body)
        except rv.ReviewError as exc:
            return ("error", str(exc))


@settings(max_examples=400, deadline=None)
@given(edits=st.lists(st.tuples(st.sampled_from(["top:apiVersion", "top:kind", "top:request",
                                                  *(f"req:{k}" for k in REQUEST_KEYS),
                                                  *(f"gvk:{k}" for k in GVK_KEYS)]),
                                st.one_of(VALUES, st.just("<delete>"))), max_size=3))
def test_fast_and_slow_checks_agree(edits, monkeypatch_session):
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
    body = orjson.dumps(doc)
    try:
        fast = rv.parse_review(body)
    except rv.ReviewError as exc:
        fast = ("error", str(exc))
    assert fast == slow(body, monkeypatch_session)


@pytest.fixture(scope="module")
def monkeypatch_session():
    with pytest.MonkeyPatch.context() as m:
        yield m


@pytest.mark.pure_python  # compiled, parse_review calls its own _well_formed directly
def test_the_benchmark_review_takes_the_fast_path(monkeypatch: pytest.MonkeyPatch):
    calls = []
    monkeypatch.setattr(rv, "_well_formed", lambda doc: calls.append(doc) or True)
    rv.parse_review(orjson.dumps(base()))
    assert calls
