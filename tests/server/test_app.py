"""server/app.py over the real server (uvicorn + TLS on 127.0.0.1, bundled catalogue): the endpoints, their errors
(400 naming the field, 413), metrics and logs. The decisions themselves: tests/admission/."""
from __future__ import annotations

import copy
import json
import time

import httpx
import jsonpatch
import orjson
import pytest

from tests.kit.admission import VM, patch_of
from tests.kit.builders import review
from tests.kit.server import Server, serve
from tests.kit.wait import wait_for


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("srv")
    # --log-allowed 1: a line for every review, which the tests below read (the default samples allowed reviews)
    with serve(tmp, "--log-allowed", "1",
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


def test_health_and_ready(client: httpx.Client):
    assert client.get("/healthz").json() == {"status": "ok"}
    ready = client.get("/readyz").json()
    assert ready["status"] == "ready" and ready["kubevirt"]["release"] == "main"
    assert ready["referenceSource"] == ("bundled catalogue common-instancetypes v1.6.0-90-g7c1e305b "
                                        "(the project's bundle, used when answering as main)")


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


def test_preview_endpoint(client: httpx.Client):
    """/preview answers admission.preview.preview's JSON (tests/admission/test_preview.py), 400 for a non-VM."""
    resp = client.post("/preview", content=orjson.dumps(VM))
    assert resp.status_code == 200 and resp.headers["content-type"] == "application/json"
    out = resp.json()
    assert out["allowed"] and jsonpatch.apply_patch(VM, out["patch"], in_place=False) == out["vm"]
    assert out["domainXMLPolicy"] == "expand"
    assert client.post("/preview", params={"instancetype": "Kind/"}, content=orjson.dumps(VM)).status_code == 422
    bad = client.post("/preview", content=b"[]")
    assert bad.status_code == 400 and bad.json()["field"] == ""
    assert client.post("/preview", content=b"{nope").status_code == 400


def test_metrics_endpoint(client: httpx.Client, server: Server):
    post(client, "/validate", review(VM))
    post(client, "/mutate", review(VM))  # its own: under xdist this module's other tests may run on another server
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




def review_lines(srv: Server) -> dict[str, dict]:
    """The server's review lines so far, by uid."""
    return {line["uid"]: line for line in map(json.loads, srv.logs().splitlines()) if line.get("msg") == "review"}


@pytest.mark.parametrize("args, logged, sampled", [
    ((), [0, 100], 100),  # the default: 1 in 100 allowed reviews, the line standing for 100
    (("--log-allowed", "1"), list(range(101)), None),
    (("--log-level", "debug"), list(range(101)), None),  # debug: every one, whatever the sampling
])
def test_allowed_reviews_are_sampled_and_refusals_and_patches_always_logged(tmp_path, args, logged, sampled):
    conflict = copy.deepcopy(VM)
    conflict["spec"]["template"]["spec"]["domain"]["cpu"] = {"sockets": 4}
    with serve(tmp_path, *args, env={"INSTANCETYPE_WEBHOOK_POLICY": "expand"}) as srv, srv.client() as c:
        allowed = [review(VM) for _ in range(101)]
        for body in allowed:
            assert post(c, "/validate", body)["allowed"] is True
        refused, patched = review(conflict), review(VM)
        assert post(c, "/validate", refused)["allowed"] is False
        assert patch_of(post(c, "/mutate", patched))
        wait_for(lambda: patched["request"]["uid"] in review_lines(srv), 5, "the patched review's line")
        lines = review_lines(srv)
    uids = [body["request"]["uid"] for body in allowed]
    assert [index for index, uid in enumerate(uids) if uid in lines] == logged
    assert {lines[uids[index]].get("sampled") for index in logged} == {sampled}
    for body, outcome in ((refused, "denied"), (patched, "patched")):  # never sampled
        line = lines[body["request"]["uid"]]
        assert line["outcome"] == outcome and "sampled" not in line


def test_the_allowed_reviews_sampling_set_in_the_environment_reaches_the_log(tmp_path):
    with serve(tmp_path, env={"INSTANCETYPE_WEBHOOK_POLICY": "expand",
                              "INSTANCETYPE_WEBHOOK_LOG_ALLOWED": "0"}) as srv, srv.client() as c:
        allowed, patched = review(VM), review(VM)
        post(c, "/validate", allowed)
        assert patch_of(post(c, "/mutate", patched))
        wait_for(lambda: patched["request"]["uid"] in srv.logs(), 5, "the patched review's line")
        logs = srv.logs()
        assert patched["request"]["uid"] in logs and allowed["request"]["uid"] not in logs
