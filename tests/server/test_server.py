"""The real server (uvicorn + TLS on 127.0.0.1, bundled catalogue): endpoints, policy, errors, metrics, logs."""
from __future__ import annotations

import base64
import copy
import json
import time
from pathlib import Path

import httpx
import jsonpatch
import orjson
import pytest

from instancetype_webhook.admission.policy import POLICY_KEY, PROVENANCE_KEY
from tests.kit.builders import review
from tests.kit.server import Server, serve

SECRET = "#cloud-config\npassword: hunter2-do-not-log\n"
VM = {
    "apiVersion": "kubevirt.io/v1",
    "kind": "VirtualMachine",
    "metadata": {"name": "web-1", "namespace": "apps", "labels": {"app": "web"},
                 "annotations": {"example.com/owner": "team-a"}},
    "spec": {
        "runStrategy": "Always",
        "instancetype": {"name": "u1.medium"},
        "preference": {"name": "fedora"},
        "template": {"spec": {
            "domain": {"devices": {}},
            "volumes": [
                {"name": "rootdisk", "containerDisk": {"image": "quay.io/containerdisks/fedora:41"}},
                {"name": "cloudinit", "cloudInitNoCloud": {"userData": SECRET}},
            ],
        }},
    },
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("srv")
    with serve(tmp,
               env={"INSTANCETYPE_WEBHOOK_POLICY": "expand", "INSTANCETYPE_WEBHOOK_MAX_BODY_BYTES": "200000"}) as srv:
        yield srv


@pytest.fixture(scope="module")
def client(server: Server):
    with server.client() as c:
        yield c


def post(client: httpx.Client, path: str, body: dict) -> dict:
    resp = client.post(path, content=orjson.dumps(body))
    assert resp.status_code == 200, resp.text
    out = resp.json()
    assert out["response"]["uid"] == body["request"]["uid"]
    return out["response"]


def patch_of(resp: dict) -> list[dict]:
    return json.loads(base64.b64decode(resp["patch"])) if "patch" in resp else []


def test_health_and_ready(client: httpx.Client):
    assert client.get("/healthz").json() == {"status": "ok"}
    assert client.get("/readyz").json()["status"] == "ready"


def test_expand_create_flattens_with_targeted_patch(client: httpx.Client):
    resp = post(client, "/mutate", review(VM))
    assert resp["allowed"] and resp["patchType"] == "JSONPatch"
    ops = patch_of(resp)
    paths = {op["path"] for op in ops}
    assert "/spec" not in paths and "/metadata" not in paths
    assert {"op": "remove", "path": "/spec/instancetype"} in ops
    assert {"op": "remove", "path": "/spec/preference"} in ops
    # annotation keys are JSON-pointer escaped
    assert f"/metadata/annotations/{PROVENANCE_KEY.replace('/', '~1')}" in paths
    flat = jsonpatch.apply_patch(VM, ops, in_place=False)
    domain = flat["spec"]["template"]["spec"]["domain"]
    assert domain["cpu"]["sockets"] == 1 and domain["memory"]["guest"] == "4Gi"
    assert flat["spec"]["template"]["spec"]["volumes"][1] == VM["spec"]["template"]["spec"]["volumes"][1]
    assert list(flat["metadata"]["annotations"])[0] == "example.com/owner"
    prov = json.loads(flat["metadata"]["annotations"][PROVENANCE_KEY])
    assert prov["instancetype"] == {"kind": "VirtualMachineClusterInstancetype", "name": "u1.medium"} | {
        k: v for k, v in prov["instancetype"].items() if k in ("uid", "generation")}
    assert prov["preference"]["name"] == "fedora"
    # Calling again on the patched VM yields no patch.
    again = post(client, "/mutate", review(flat))
    assert again["allowed"] and "patch" not in again


def test_expand_update_keeps_a_vm_captured_under_reference(client: httpx.Client):
    old = copy.deepcopy(VM)
    old["status"] = {"instancetypeRef": {"name": "u1.medium", "kind": "VirtualMachineClusterInstancetype",
                                         "controllerRevisionRef": {"name": "web-1-u1.medium-v1beta1-uid-1"}}}
    resp = post(client, "/mutate", review(VM, "UPDATE", old=old))
    assert resp["allowed"] and "patch" not in resp
    # Without a captured revision in the stored object, UPDATE expands.
    resp = post(client, "/mutate", review(VM, "UPDATE", old=copy.deepcopy(VM)))
    assert resp["allowed"] and patch_of(resp)


def test_vm_annotation_is_ignored_by_default_with_a_warning(client: httpx.Client):
    """The cluster admin's policy holds: a VM owner cannot opt out."""
    vm = copy.deepcopy(VM)
    vm["metadata"]["annotations"][POLICY_KEY] = "reference"
    resp = post(client, "/mutate", review(vm))
    assert patch_of(resp)
    assert any(w.endswith("annotation ignored (VM overrides off): policy expand (cluster) applies")
               for w in resp["warnings"])


def test_vm_annotation_overrides_policy_when_the_admin_allows_it(tmp_path: Path):
    with serve(tmp_path, "--allow-vm-policy", env={"INSTANCETYPE_WEBHOOK_POLICY": "expand"}) as srv, \
            srv.client() as client:
        vm = copy.deepcopy(VM)
        vm["metadata"]["annotations"][POLICY_KEY] = "reference"
        resp = post(client, "/mutate", review(vm))
        assert resp["allowed"] and "patch" not in resp
        old = copy.deepcopy(VM)
        old["status"] = {"preferenceRef": {"name": "fedora", "controllerRevisionRef": {"name": "r"}}}
        vm["metadata"]["annotations"][POLICY_KEY] = "expandAll"
        assert patch_of(post(client, "/mutate", review(vm, "UPDATE", old=old)))
        vm["metadata"]["annotations"][POLICY_KEY] = "sometimes"
        resp = post(client, "/mutate", review(vm))
        assert patch_of(resp) and any("not a policy" in w for w in resp["warnings"])


def test_dry_run_is_answered_the_same(client: httpx.Client, server: Server):
    body = review(VM, dryRun=True)
    resp = post(client, "/mutate", body)
    assert resp["allowed"] and patch_of(resp)
    deadline = time.monotonic() + 10  # the log line is written by the server's own process: read until it is there
    while not (lines := [json.loads(e) for e in server.logs().splitlines() if body["request"]["uid"] in e]):
        assert time.monotonic() < deadline, "no log line for the review"
        time.sleep(0.05)
    line = lines[0]
    assert line["dryRun"] is True and line["patchOps"] == len(patch_of(resp))


def test_missing_reference_denied_under_expand_admitted_by_validate(client: httpx.Client):
    vm = copy.deepcopy(VM)
    vm["spec"]["instancetype"] = {"name": "no-such-size"}
    resp = post(client, "/mutate", review(vm))
    assert not resp["allowed"] and "patch" not in resp
    assert '"no-such-size" not found' in resp["status"]["message"]
    # /validate ignores the missing instance type, as upstream does, but still checks the preference's
    # requirements against the VM alone (spec 3.6): fedora needs 2Gi the VM does not give.
    resp = post(client, "/validate", review(vm))
    assert not resp["allowed"] and "preference requires 2Gi" in resp["status"]["message"]
    del vm["spec"]["preference"]
    resp = post(client, "/validate", review(vm))
    assert resp["allowed"]
    assert resp["warnings"] and all(len(w) <= 120 for w in resp["warnings"])
    assert any("no-such-size" in w for w in resp["warnings"])


def test_conflict_denied_with_upstream_causes(client: httpx.Client):
    vm = copy.deepcopy(VM)
    vm["spec"]["template"]["spec"]["domain"]["cpu"] = {"sockets": 4}
    for path in ("/mutate", "/validate"):
        resp = post(client, path, review(vm))
        assert not resp["allowed"] and "patch" not in resp
        status = resp["status"]
        assert status["code"] == 422 and status["reason"] == "Invalid"
        assert status["details"]["causes"] == [{
            "reason": "FieldValueInvalid", "field": "spec.template.spec.domain.cpu.sockets",
            "message": "VM field(s) spec.template.spec.domain.cpu.sockets conflicts with selected instance type"}]


def test_instancetype_object_admission(client: httpx.Client):
    good = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineInstancetype",
            "metadata": {"name": "small", "namespace": "apps"},
            "spec": {"cpu": {"guest": 1}, "memory": {"guest": "1Gi"}}}
    kw = {"group": "instancetype.kubevirt.io", "version": "v1beta1", "kind": "VirtualMachineInstancetype"}
    assert post(client, "/validate", review(good, **kw))["allowed"]
    bad = copy.deepcopy(good)
    del bad["spec"]["cpu"]
    resp = post(client, "/validate", review(bad, **kw))
    assert not resp["allowed"] and "spec.cpu" in resp["status"]["message"]
    # /mutate leaves these objects alone.
    resp = post(client, "/mutate", review(bad, **kw))
    assert resp["allowed"] and "patch" not in resp


def test_unrelated_kind_and_delete_are_allowed_untouched(client: httpx.Client):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "apps"}, "spec": {}}
    for path in ("/mutate", "/validate"):
        resp = post(client, path, review(pod, group="", kind="Pod"))
        assert resp == {"uid": resp["uid"], "allowed": True}
        resp = post(client, path, review(None, "DELETE", old=VM))
        assert resp["allowed"] and "patch" not in resp


@pytest.mark.parametrize("body, field", [
    (b"", ""),
    (b"{not json", ""),
    (b"[1, 2]", ""),
    (b'{"apiVersion": "admission.k8s.io/v1", "kind": "Pod"}', "kind"),
    (b'{"apiVersion": "v1", "kind": "AdmissionReview"}', "apiVersion"),
    (b'{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}', "request"),
    (b'{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", '
     b'"request": {"kind": {}, "operation": "CREATE"}}',
     "request.uid"),
    (b'{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {"uid": 5}}', "request.uid"),
    (b'{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {"uid": "u", "kind": {},'
     b' "operation": "PATCH", "object": {}}}', "request.operation"),
    (b'{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {"uid": "u", "kind": {},'
     b' "operation": "CREATE", "object": [1]}}', "request.object"),
    (b'{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {"uid": "u", "kind": {},'
     b' "operation": "UPDATE"}}', "request.object"),
    (b'{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {"uid": "u",'
     b' "kind": {"group": "kubevirt.io", "version": "v1", "kind": "VirtualMachine"}, "operation": "CREATE",'
     b' "object": {"spec": ' + b'{"a": ' * 300 + b"1" + b"}" * 300 + b"}}}", ""),
    (b"\xff\xfe not utf-8", ""),
])
def test_bad_bodies_get_400_naming_the_problem(client: httpx.Client, body: bytes, field: str):
    for path in ("/mutate", "/validate"):
        resp = client.post(path, content=body)
        assert resp.status_code == 400, resp.text
        err = resp.json()
        assert err["error"]
        assert err["field"] == field


def test_oversized_body_gets_413(client: httpx.Client):
    vm = copy.deepcopy(VM)
    vm["spec"]["template"]["spec"]["volumes"][1]["cloudInitNoCloud"]["userData"] = "x" * 300_000
    resp = client.post("/mutate", content=orjson.dumps(review(vm)))
    assert resp.status_code == 413 and "larger than 200000" in resp.json()["error"]


def test_preview(client: httpx.Client):
    resp = client.post("/preview", content=orjson.dumps(VM))
    assert resp.status_code == 200
    out = resp.json()
    assert out["allowed"] and out["conflicts"] == []
    assert jsonpatch.apply_patch(VM, out["patch"], in_place=False) == out["vm"]
    assert "spec" in out["vm"] and "instancetype" not in out["vm"]["spec"]
    assert out["domainXMLPolicy"] == "expand" and out["domainXML"].startswith("<domain")
    desktop = copy.deepcopy(VM)  # rhel.9.desktop auto-attaches a virtio tablet, but only while it is referenced
    desktop["spec"]["preference"] = {"name": "rhel.9.desktop"}
    flat_xml = client.post("/preview", content=orjson.dumps(desktop)).json()["domainXML"]
    assert '<input type="tablet" bus="usb">' in flat_xml
    from instancetype_webhook.admission.context import ReviewContext
    from instancetype_webhook.admission.preview import domain_xml
    from instancetype_webhook.sources.catalog import load_catalog

    reference = domain_xml(desktop, "apps", ReviewContext(source=load_catalog(default_namespace="apps")))
    assert reference["domainXMLPolicy"] == "reference"
    assert '<input type="tablet" bus="virtio" model="virtio">' in reference["domainXML"]
    conflict = copy.deepcopy(VM)
    conflict["spec"]["template"]["spec"]["domain"]["memory"] = {"guest": "1Gi"}
    out = client.post("/preview", content=orjson.dumps(conflict)).json()
    assert not out["allowed"] and out["error"]["kind"] == "conflict"
    assert out["conflicts"][0]["field"] == "spec.template.spec.domain.memory.guest"
    assert client.post("/preview", content=b"[]").status_code == 400


def test_metrics_endpoint(client: httpx.Client, server: Server):
    post(client, "/validate", review(VM))
    client.post("/validate", content=b"nope")
    text = httpx.get(server.metrics_url + "/metrics", timeout=5).text
    assert ('instancetype_webhook_requests_total'
            '{endpoint="validate",kind="VirtualMachine",operation="CREATE",outcome="allowed"}') in text
    assert 'instancetype_webhook_errors_total{endpoint="validate",reason="bad_request"}' in text
    assert 'instancetype_webhook_request_duration_seconds_bucket{endpoint="mutate",le="0.005"}' in text
    assert "instancetype_webhook_requests_in_flight" in text


def test_one_json_log_line_per_review_without_the_object(client: httpx.Client, server: Server):
    body = review(VM)
    post(client, "/validate", body)
    lines = [json.loads(entry) for entry in server.logs().splitlines() if body["request"]["uid"] in entry]
    assert len(lines) == 1
    line = lines[0]
    assert {k: line[k] for k in ("endpoint", "kind", "namespace", "name", "operation", "dryRun", "allowed")} == {
        "endpoint": "validate", "kind": "VirtualMachine", "namespace": "apps", "name": "web-1",
        "operation": "CREATE", "dryRun": False, "allowed": True}
    assert isinstance(line["durationMs"], float) and line["patchOps"] == 0
    assert "hunter2" not in server.logs()


def test_plain_http_is_refused(server: Server):
    with pytest.raises(httpx.HTTPError):
        httpx.post(server.url.replace("https", "http") + "/mutate", content=b"{}", timeout=3)


def test_reference_policy_passes_vms_through(tmp_path: Path):
    with serve(tmp_path) as srv, srv.client() as c:
        resp = post(c, "/mutate", review(VM))
        assert resp == {"uid": resp["uid"], "allowed": True}
        vm = copy.deepcopy(VM)
        vm["metadata"]["annotations"][POLICY_KEY] = "expand"  # ignored: VM-level overrides are off
        resp = post(c, "/mutate", review(vm))
        assert "patch" not in resp and resp["warnings"][0].endswith("policy reference (cluster) applies")
