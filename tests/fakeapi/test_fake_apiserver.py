"""The fake API server is as strict as a real one where our code relies on it: paging, preconditions,
409s, patch types, dry-run, generation, status subresource, uninstalled groups, admission."""
from __future__ import annotations

import base64
import http.client as httplib
import json
import time
from pathlib import Path

import httpx
import orjson
import pytest

from tests.kit.builders import vm as build_vm
from tests.kit.server import serve

VMS = "/apis/kubevirt.io/v1/namespaces/{ns}/virtualmachines"


def vm(name: str, ns: str = "apps", cpu: int = 1) -> dict:
    return build_vm(name, ns, domain={"cpu": {"cores": cpu}})


@pytest.fixture
def http(fake):
    with httpx.Client(base_url=fake.url, timeout=10) as client:
        yield client


def test_list_pages_with_continue_on_a_consistent_snapshot(fake, http):
    for i in range(7):
        fake.add(vm(f"vm{i}", ns="a" if i % 2 else "b"))
    first = http.get("/apis/kubevirt.io/v1/virtualmachines", params={"limit": 3}).json()
    assert [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in first["items"]] == [
        ("a", "vm1"), ("a", "vm3"), ("a", "vm5")]  # key order, like etcd
    assert "kind" not in first["items"][0] and first["metadata"]["remainingItemCount"] == 4
    fake.add(vm("vm9", ns="a"))  # after the first page: not in this list
    names, token = [], first["metadata"]["continue"]
    while token:
        page = http.get("/apis/kubevirt.io/v1/virtualmachines", params={"limit": 3, "continue": token}).json()
        assert page["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
        names += [o["metadata"]["name"] for o in page["items"]]
        token = page["metadata"].get("continue")
    assert names == ["vm0", "vm2", "vm4", "vm6"]
    assert len(http.get(VMS.format(ns="a")).json()["items"]) == 4


def test_label_and_field_selectors(fake, http):
    fake.add({**vm("a"), "metadata": {**vm("a")["metadata"], "labels": {"tier": "db"}}})
    fake.add(vm("b"))
    names = lambda resp: [o["metadata"]["name"] for o in resp.json()["items"]]  # noqa: E731  (a one-line helper)
    assert names(http.get(VMS.format(ns="apps"), params={"labelSelector": "tier=db"})) == ["a"]
    assert names(http.get(VMS.format(ns="apps"), params={"labelSelector": "!tier"})) == ["b"]
    assert names(http.get("/apis/kubevirt.io/v1/virtualmachines", params={"fieldSelector": "metadata.name=b"})) == ["b"]
    bad = http.get(VMS.format(ns="apps"), params={"fieldSelector": "spec.running=true"})
    assert bad.status_code == 400 and "not a known field selector" in bad.json()["message"]


def test_expired_continue_token_is_410(fake, http):
    for i in range(4):
        fake.add(vm(f"vm{i}"))
    token = http.get(VMS.format(ns="apps"), params={"limit": 2}).json()["metadata"]["continue"]
    fake.compact()
    resp = http.get(VMS.format(ns="apps"), params={"limit": 2, "continue": token})
    assert resp.status_code == 410 and resp.json()["reason"] == "Expired"


def test_writes_bump_resource_version_and_generation_only_on_spec_change(fake, http):
    created = http.post(VMS.format(ns="apps"), json=vm("x"))
    assert created.status_code == 201
    meta = created.json()["metadata"]
    assert meta["generation"] == 1 and int(meta["resourceVersion"]) == fake.rv
    labelled = http.patch(VMS.format(ns="apps") + "/x", json={"metadata": {"labels": {"a": "b"}}},
                          headers={"Content-Type": "application/merge-patch+json"}).json()
    assert labelled["metadata"]["generation"] == 1
    assert labelled["metadata"]["resourceVersion"] != meta["resourceVersion"]
    ops = [{"op": "replace", "path": "/spec/template/spec/domain/cpu/cores", "value": 4}]
    patched = http.patch(VMS.format(ns="apps") + "/x", content=json.dumps(ops),
                         headers={"Content-Type": "application/json-patch+json"}).json()
    assert patched["metadata"]["generation"] == 2
    rv = fake.rv
    same = http.patch(VMS.format(ns="apps") + "/x", content=json.dumps(ops),
                      headers={"Content-Type": "application/json-patch+json"}).json()
    assert fake.rv == rv and same["metadata"]["resourceVersion"] == str(rv)  # a no-op is not stored


def test_stale_resource_version_is_409_with_the_real_message(fake, http):
    stored = fake.add(vm("x"))
    fake.add(vm("x", cpu=2))  # someone else wrote in between
    body = {**vm("x", cpu=3),
            "metadata": {**vm("x")["metadata"], "resourceVersion": stored["metadata"]["resourceVersion"]}}
    for resp in (http.put(VMS.format(ns="apps") + "/x", json=body),
                 http.patch(VMS.format(ns="apps") + "/x", json={"metadata": body["metadata"]},
                            headers={"Content-Type": "application/merge-patch+json"})):
        assert resp.status_code == 409
        answer = resp.json()
        assert answer["reason"] == "Conflict" and answer["details"] == {
            "name": "x", "group": "kubevirt.io", "kind": "virtualmachines"}
        assert answer["message"] == ('Operation cannot be fulfilled on virtualmachines.kubevirt.io "x": the object '
                                     "has been modified; please apply your changes to the latest version and try again")
    assert fake.get("virtualmachines", "x", "apps")["spec"]["template"]["spec"]["domain"]["cpu"]["cores"] == 2
    unconditional = http.put(VMS.format(ns="apps") + "/x", json=vm("x", cpu=3))
    assert unconditional.status_code == 422 and "must be specified for an update" in unconditional.json()["message"]


def test_patch_types(fake, http):
    fake.add(vm("x"))
    fake.add({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "apps"}})
    strategic = {"Content-Type": "application/strategic-merge-patch+json"}
    resp = http.patch(VMS.format(ns="apps") + "/x", json={"metadata": {"labels": {"a": "b"}}}, headers=strategic)
    assert resp.status_code == 415 and resp.json()["reason"] == "UnsupportedMediaType"
    ok = http.patch("/api/v1/namespaces/apps", json={"metadata": {"labels": {"a": "b"}}}, headers=strategic)
    assert ok.status_code == 200 and ok.json()["metadata"]["labels"] == {"a": "b"}  # built-in: accepted
    bad = http.patch(VMS.format(ns="apps") + "/x", content=b'[{"op": "test", "path": "/spec/running", "value": true}]',
                     headers={"Content-Type": "application/json-patch+json"})
    assert bad.status_code == 422


def test_dry_run_is_not_stored(fake, http):
    fake.add(vm("x"))
    rv = fake.rv
    resp = http.patch(VMS.format(ns="apps") + "/x", params={"dryRun": "All"}, json={"spec": {"runStrategy": "Always"}},
                      headers={"Content-Type": "application/merge-patch+json"})
    assert resp.status_code == 200 and resp.json()["spec"]["runStrategy"] == "Always"
    assert fake.rv == rv and fake.get("VirtualMachine", "x", "apps")["spec"]["runStrategy"] == "Halted"
    assert http.post(VMS.format(ns="apps"), params={"dryRun": "All"}, json=vm("y")).status_code == 201
    assert fake.get("VirtualMachine", "y", "apps") is None and fake.writes == 0


def test_status_subresource(fake, http):
    fake.add({**vm("x"), "status": {"ready": True}})
    put = http.put(VMS.format(ns="apps") + "/x", json={**fake.get("VirtualMachine", "x", "apps"), "status": {}})
    assert put.json()["status"] == {"ready": True}  # the main resource does not write status
    st = http.patch(VMS.format(ns="apps") + "/x/status", json={"status": {"ready": False}, "spec": {"running": True}},
                    headers={"Content-Type": "application/merge-patch+json"}).json()
    assert st["status"] == {"ready": False} and "running" not in st["spec"]


def test_uninstalled_group_is_404_and_discovery(fake, http):
    assert http.get("/apis/cdi.kubevirt.io/v1beta1").json()["resources"][0]["name"] in ("datavolumes", "datasources")
    fake.uninstall("cdi.kubevirt.io")
    for path in ("/apis/cdi.kubevirt.io/v1beta1", "/apis/cdi.kubevirt.io/v1beta1/datavolumes"):
        resp = http.get(path)
        assert resp.status_code == 404 and resp.json()["kind"] == "Status"
    fake.register("example.com", "v1", "widgets", "Widget")
    assert http.get("/apis/example.com/v1/namespaces/a/widgets").json()["kind"] == "WidgetList"


def test_admission_through_the_real_webhook(fake, http, tmp_path: Path):
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    (catalog / "it.json").write_text(json.dumps({
        "apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineClusterInstancetype",
        "metadata": {"name": "small"}, "spec": {"cpu": {"guest": 2}, "memory": {"guest": "1Gi"}}}))
    with serve(tmp_path, "--catalog", str(catalog), "--policy", "expandAll") as server:
        fake.admission(server.url + "/mutate", server.url + "/validate", ca=str(server.certs.ca))
        ref = vm("x")
        del ref["spec"]["template"]["spec"]["domain"]["cpu"]
        ref["spec"]["instancetype"] = {"name": "small"}
        dry = http.post(VMS.format(ns="apps"), params={"dryRun": "All"}, json=ref)
        assert dry.status_code == 201 and "instancetype" not in dry.json()["spec"]
        assert fake.get("VirtualMachine", "x", "apps") is None and fake.reviews == 2
        stored = http.post(VMS.format(ns="apps"), json=ref).json()
        assert stored["spec"]["template"]["spec"]["domain"]["cpu"]["sockets"] == 2
        missing = {**ref, "metadata": {"name": "y"}, "spec": {**ref["spec"], "instancetype": {"name": "nope"}}}
        denied = http.post(VMS.format(ns="apps"), json=missing)
        assert denied.status_code == 400
        assert denied.json()["message"].startswith(
            'admission webhook "instancetype-webhook.kubevirt.io" denied the request: ')
        assert fake.get("VirtualMachine", "y", "apps") is None


def test_admission_jsonpatch_is_applied_as_the_api_server_does(fake, http):
    """A stand-in webhook that answers with a patch and a warning (no TLS needed for this part)."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Hook(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802  (http.server's handler name)
            review = orjson.loads(self.rfile.read(int(self.headers["Content-Length"])))
            patch = [{"op": "add", "path": "/metadata/labels", "value": {"seen": str(review["request"]["dryRun"])}}]
            body = orjson.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": {
                "uid": review["request"]["uid"], "allowed": True, "warnings": ["look out"],
                "patchType": "JSONPatch", "patch": base64.b64encode(orjson.dumps(patch)).decode()}})
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    hook = ThreadingHTTPServer(("127.0.0.1", 0), Hook)
    threading.Thread(target=hook.serve_forever, daemon=True).start()
    try:
        fake.admission(f"http://127.0.0.1:{hook.server_address[1]}/")
        resp = http.post(VMS.format(ns="apps"), json=vm("x"))
        assert resp.json()["metadata"]["labels"] == {"seen": "False"}
        assert resp.headers["warning"] == '299 - "look out"'
    finally:
        hook.shutdown()
        hook.server_close()


def _answer(conn) -> int | None:
    """The status of a GET on this (kept-alive) connection, None when the server answers nothing."""
    try:
        conn.request("GET", "/apis/kubevirt.io/v1/virtualmachines")
        resp = conn.getresponse()
        resp.read()
        return resp.status
    except (OSError, httplib.HTTPException):
        return None


def test_a_stopped_server_answers_no_open_connection(fake):
    """The race behind the fault test's rare failure: a connection accepted before stop() (a keep-alive one in a
    client's pool, or a watch whose request was still being read) kept being served by its handler thread."""
    kept_alive = httplib.HTTPConnection("127.0.0.1", fake.port, timeout=5)
    assert _answer(kept_alive) == 200
    idle = httplib.HTTPConnection("127.0.0.1", fake.port, timeout=5)
    idle.connect()  # accepted, no request yet
    time.sleep(0.2)
    fake.stop()
    assert _answer(kept_alive) is None
    assert _answer(idle) is None
    kept_alive.close()
    idle.close()


IT_LIST = "/apis/instancetype.kubevirt.io/v1beta1/virtualmachineclusterinstancetypes"


def _instancetypes(fake, count: int) -> None:
    for i in range(count):
        fake.add({"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineClusterInstancetype",
                  "metadata": {"name": f"it{i}"}, "spec": {"cpu": {"guest": 1}, "memory": {"guest": "1Gi"}}})


def test_a_list_with_a_resource_version_is_served_from_the_watch_cache_whole(fake, http):
    _instancetypes(fake, 7)
    cached = http.get(IT_LIST, params={"resourceVersion": "0", "limit": 3}).json()
    assert len(cached["items"]) == 7 and "continue" not in cached["metadata"]  # the limit is not honoured
    assert cached["metadata"]["resourceVersion"] == str(fake.rv)
    assert len(http.get(IT_LIST, params={"resourceVersion": str(fake.rv)}).json()["items"]) == 7  # not older
    assert fake.list_reads == {"cache": 2, "etcd": 0}
    paged = http.get(IT_LIST, params={"limit": 3}).json()  # no resourceVersion: the consistent read, paged
    assert len(paged["items"]) == 3 and paged["metadata"]["continue"]
    assert fake.list_reads == {"cache": 2, "etcd": 1}
    both = http.get(IT_LIST, params={"resourceVersion": "0", "continue": paged["metadata"]["continue"]})
    assert both.status_code == 400
    ahead = http.get(IT_LIST, params={"resourceVersion": str(fake.rv + 5)})
    assert ahead.status_code == 504 and ahead.json()["details"]["causes"][0]["reason"] == "ResourceVersionTooLarge"


def test_a_cache_not_ready_is_429_and_without_a_watch_cache_lists_page(fake, http):
    _instancetypes(fake, 7)
    fake.cache_list_errors = 1
    busy = http.get(IT_LIST, params={"resourceVersion": "0"})
    assert busy.status_code == 429 and busy.json()["message"] == "storage is (re)initializing"
    assert len(http.get(IT_LIST, params={"resourceVersion": "0"}).json()["items"]) == 7  # ready now
    fake.watch_cache = False  # --watch-cache=false: from etcd, and the limit pages
    page = http.get(IT_LIST, params={"resourceVersion": "0", "limit": 3}).json()
    assert len(page["items"]) == 3 and page["metadata"]["continue"]
    assert fake.list_reads == {"cache": 1, "etcd": 1}


def test_muted_watches_send_nothing_and_never_end_until_unmuted(fake):
    """A half-open connection: an open watch gets nothing more (no event, no bookmark) and outlives its
    timeoutSeconds; a new one gets not even its headers. Unmuted, both go on."""
    fake.bookmark_interval = 0.1
    _instancetypes(fake, 1)
    watch = {"watch": "true", "resourceVersion": str(fake.rv), "allowWatchBookmarks": "true", "timeoutSeconds": "1"}
    with httpx.Client(base_url=fake.url, timeout=httpx.Timeout(5, read=0.6)) as client:
        with client.stream("GET", IT_LIST, params=watch) as open_watch:
            lines = open_watch.iter_lines()
            assert json.loads(next(lines))["type"] == "BOOKMARK"  # talking
            fake.mute_watches()
            time.sleep(0.2)  # a bookmark on its way when muted may still come
            _instancetypes(fake, 2)  # it0 again, it1: events the open watch does not get while muted
            with pytest.raises(httpx.ReadTimeout):
                for line in lines:  # past the 1 s timeoutSeconds, nothing, not even the end
                    assert json.loads(line)["type"] == "BOOKMARK", line
                    time.sleep(0.7)  # nothing after it, if one was on its way
        with pytest.raises(httpx.ReadTimeout):  # a new watch: accepted, no headers
            client.get(IT_LIST, params=watch)
        fake.unmute_watches()
        with client.stream("GET", IT_LIST, params=watch) as resumed:
            events = [json.loads(line) for _, line in zip(range(2), resumed.iter_lines(), strict=False)]
            assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
                ("MODIFIED", "it0"), ("ADDED", "it1")]


def test_a_bookmark_never_claims_an_event_the_watch_did_not_send(fake):
    """Bookmarks every quiet moment while objects are added from another thread: every event still arrives,
    in order (a bookmark's resourceVersion is what the watch had seen when it last found nothing to send, not
    what the fake had reached after waiting)."""
    import threading

    fake.bookmark_interval = 0
    start = fake.rv
    watch = {"watch": "true", "resourceVersion": str(start), "allowWatchBookmarks": "true", "timeoutSeconds": "5"}

    def add() -> None:
        for i in range(60):
            fake.add({"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineClusterInstancetype",
                      "metadata": {"name": f"race-{i}"}, "spec": {"cpu": {"guest": 1}, "memory": {"guest": "1Gi"}}})
            time.sleep(0.005 * (i % 4))

    names: list[str] = []
    with httpx.Client(base_url=fake.url, timeout=httpx.Timeout(10)) as client, \
            client.stream("GET", IT_LIST, params=watch) as stream:
        writer = threading.Thread(target=add)
        writer.start()
        for line in stream.iter_lines():
            event = json.loads(line)
            if event["type"] == "ADDED":
                names.append(event["object"]["metadata"]["name"])
            if len(names) == 60:
                break
        writer.join()
    assert names == [f"race-{i}" for i in range(60)]
