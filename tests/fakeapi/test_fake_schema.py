"""The fake API server with real CRDs: writes pruned and validated against the CRD's schema as
kube-apiserver does, Events validated, RBAC 403s, and the request and object size limits."""
from __future__ import annotations

import httpx
import orjson
import pytest
import yaml

from tests.fakeapi.apiserver import MAX_OBJECT_BYTES, FakeAPIServer
from tests.kit.shared_data import SHARED

REPORTS = "/apis/wgpolicyk8s.io/v1alpha2/namespaces/ns/policyreports"
EVENTS = "/apis/events.k8s.io/v1/namespaces/ns/events"


@pytest.fixture
def fake():
    server = FakeAPIServer()
    server.install_crd(yaml.safe_load((SHARED / "policyreport-crds" / "wgpolicyk8s.io_policyreports.yaml").read_text()))
    yield server
    server.stop()


@pytest.fixture
def http(fake):
    with httpx.Client(base_url=fake.url, timeout=10, headers={"Content-Type": "application/json"}) as client:
        yield client


def report(name: str = "r", **extra) -> dict:
    return {"apiVersion": "wgpolicyk8s.io/v1alpha2", "kind": "PolicyReport", "metadata": {"name": name},
            "results": [{"policy": "p", "result": "pass"}], **extra}


def test_every_served_version_is_discovered(http):
    for version in ("v1alpha1", "v1alpha2", "v1beta1"):
        doc = http.get(f"/apis/wgpolicyk8s.io/{version}").json()
        assert [r["name"] for r in doc["resources"]] == ["policyreports"]
    assert http.get("/apis/openreports.io/v1alpha1").status_code == 404  # not installed


def test_unknown_fields_are_pruned_as_the_real_server_does(http):
    resp = http.post(REPORTS, content=orjson.dumps(report(bogus=1, summary={"pass": 1, "extra": 2})))
    assert resp.status_code == 201
    stored = resp.json()
    assert "bogus" not in stored and stored["summary"] == {"pass": 1}


@pytest.mark.parametrize("body, message", [
    (report(results=[{"policy": "p", "result": "flattened"}]),
     'results[0].result: Unsupported value: "flattened": supported values: "pass", "fail", "warn", "error", "skip"'),
    (report(results=[{"result": "pass"}]), "results[0].policy: Required value"),
    (report(summary={"pass": "3"}), 'summary.pass: Invalid value: "str": summary.pass in body must be of type integer'),
    (report(results=[{"policy": "p", "timestamp": {"seconds": 1, "nanos": 2**31}}]), "results[0].timestamp.nanos"),
    (report("Not_A_Name"), 'metadata.name: Invalid value: "Not_A_Name"'),
    ({**report(), "metadata": {"name": "r", "labels": {"k": "x" * 64}}}, "metadata.labels: Invalid value"),
])
def test_schema_violations_are_422_invalid(http, body, message):
    resp = http.post(REPORTS, content=orjson.dumps(body))
    assert resp.status_code == 422, resp.text
    assert resp.json()["reason"] == "Invalid" and message in resp.json()["message"]
    assert resp.json()["message"].startswith(f'PolicyReport.wgpolicyk8s.io "{body["metadata"]["name"]}" is invalid')


def test_updates_are_validated_too(http):
    http.post(REPORTS, content=orjson.dumps(report()))
    stored = http.get(REPORTS + "/r").json()
    stored["results"][0]["result"] = "nope"
    assert http.put(REPORTS + "/r", content=orjson.dumps(stored)).status_code == 422


def test_objects_over_the_etcd_limit_are_not_stored(http):
    big = report(results=[{"policy": "p" * 1000, "result": "pass"}] * (MAX_OBJECT_BYTES // 1000))
    resp = http.post(REPORTS, content=orjson.dumps(big))
    assert resp.status_code == 500 and resp.json()["message"] == "etcdserver: request is too large"
    huge = report(results=[{"policy": "p" * 1000, "result": "pass"}] * 3200)
    assert http.post(REPORTS, content=orjson.dumps(huge)).status_code == 413


def test_forbidden_verbs_answer_403(fake, http):
    fake.forbid("list", "policyreports")
    resp = http.get("/apis/wgpolicyk8s.io/v1alpha2/policyreports")
    assert resp.status_code == 403 and resp.json()["reason"] == "Forbidden"
    assert 'cannot list resource "policyreports" in API group "wgpolicyk8s.io" at the cluster scope' in \
        resp.json()["message"]
    assert http.post(REPORTS, content=orjson.dumps(report())).status_code == 201  # create is still allowed


def event(**extra) -> dict:
    return {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "vm.1", "namespace": "ns"},
            "eventTime": "2026-01-01T00:00:00.000000Z", "reportingController": "x.io/c", "reportingInstance": "c-1",
            "action": "Flatten", "reason": "Flattened", "type": "Normal", "note": "n",
            "regarding": {"kind": "VirtualMachine", "namespace": "ns", "name": "vm"}, **extra}


@pytest.mark.parametrize("body, message", [
    ({**event(), "eventTime": None}, "eventTime: Required value"),
    (event(type="Info"), 'type: Unsupported value: "Info"'),
    (event(note="x" * 1025), "note: Too long"),
    (event(series={"count": 1, "lastObservedTime": "2026-01-01T00:00:00.000000Z"}), "series.count"),
    (event(regarding={"kind": "VirtualMachine", "namespace": "other", "name": "vm"}), "regarding.namespace"),
])
def test_events_get_the_built_in_validation(http, body, message):
    resp = http.post(EVENTS, content=orjson.dumps(body))
    assert resp.status_code == 422 and message in resp.json()["message"]


def test_a_valid_event_is_stored(http):
    assert http.post(EVENTS, content=orjson.dumps(event())).status_code == 201
