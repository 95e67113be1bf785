"""The real server on a live cluster source (the fake API server): create an instance type, then a VM
at once; the namespace label policy override; /readyz follows the source's sync."""
from __future__ import annotations

import base64
import copy
import json
import time
from pathlib import Path

import httpx
import jsonpatch
import orjson

from instancetype_webhook.admission.policy import POLICY_KEY
from tests.fakeapi.apiserver import FakeAPIServer
from tests.kit.builders import review
from tests.kit.server import serve

VM = {
    "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
    "metadata": {"name": "vm1", "namespace": "apps"},
    "spec": {"runStrategy": "Halted", "instancetype": {"name": "fresh", "kind": "VirtualMachineInstancetype"},
             "template": {"spec": {"domain": {"devices": {}}}}},
}
FRESH = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineInstancetype",
         "metadata": {"name": "fresh", "namespace": "apps"},
         "spec": {"cpu": {"guest": 3}, "memory": {"guest": "3Gi"}}}


def _post(client: httpx.Client, body: dict) -> dict:
    resp = client.post("/mutate", content=orjson.dumps(body))
    assert resp.status_code == 200, resp.text
    return resp.json()["response"]


def test_live_cluster_source_end_to_end(tmp_path: Path):
    fake = FakeAPIServer()
    fake.add({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "apps", "labels": {POLICY_KEY: "expand"}}})
    fake.add({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}})
    config = tmp_path / "kubeconfig"
    config.write_text(fake.kubeconfig())
    try:
        with serve(tmp_path, "--kubeconfig", str(config)) as server, server.client() as client:
            deadline = time.monotonic() + 10
            while client.get("/readyz").status_code != 200 and time.monotonic() < deadline:
                time.sleep(0.1)
            assert client.get("/readyz").json()["status"] == "ready"
            # Created just now, not yet seen by any watch: the live GET finds it.
            fake.add(FRESH, notify=False)
            resp = _post(client, review(VM))  # server policy is reference; the namespace label says expand
            assert resp["allowed"], resp
            flat = jsonpatch.apply_patch(VM, json.loads(base64.b64decode(resp["patch"])), in_place=False)
            assert flat["spec"]["template"]["spec"]["domain"]["cpu"]["sockets"] == 3
            prov = json.loads(flat["metadata"]["annotations"]["instancetype-webhook.kubevirt.io/expanded-from"])
            assert prov["instancetype"] == {"kind": "VirtualMachineInstancetype", "name": "fresh",
                                            "uid": "uid-fresh", "generation": 1}
            # The same VM in a namespace without the label keeps its reference (server policy).
            other = copy.deepcopy(VM)
            other["metadata"]["namespace"] = "other"
            assert "patch" not in _post(client, review(other))
    finally:
        fake.stop()


def test_readyz_waits_for_the_first_sync(tmp_path: Path):
    fake = FakeAPIServer()
    port = fake.port
    config = tmp_path / "kubeconfig"
    config.write_text(fake.kubeconfig())
    fake.stop()
    try:
        with serve(tmp_path, "--kubeconfig", str(config)) as server, server.client() as client:
            assert client.get("/healthz").status_code == 200
            not_ready = client.get("/readyz")
            assert not_ready.status_code == 503 and "not synced" in not_ready.json()["reason"]
            fake.port = port
            fake.start()
            deadline = time.monotonic() + 15
            while client.get("/readyz").status_code != 200 and time.monotonic() < deadline:
                time.sleep(0.1)
            assert client.get("/readyz").status_code == 200
    finally:
        fake.stop()


def test_start_grace_makes_an_unsynced_replica_ready_after_it_and_not_before(tmp_path: Path):
    fake = FakeAPIServer()
    config = tmp_path / "kubeconfig"
    config.write_text(fake.kubeconfig())
    fake.stop()  # the API server away for good: the source never syncs
    grace = 5.0
    launched = time.monotonic()  # the grace counts from the server's start, a little later
    with serve(tmp_path, "--kubeconfig", str(config), "--start-grace", f"{grace:g}") as server, \
            server.client() as client:
        not_ready = client.get("/readyz")  # up (/healthz answers) within a second of the start, not 5
        assert not_ready.status_code == 503
        assert not_ready.json()["reason"] == "reference source not synced yet (ready without it 5s after the start)"
        while (ready := client.get("/readyz")).status_code != 200:
            assert time.monotonic() - launched < grace + 15, "not ready after the start grace"
            time.sleep(0.1)
        assert time.monotonic() - launched >= grace
        assert ready.json()["status"] == "ready"
        assert not any(resource["inSync"] for resource in ready.json()["referenceCache"].values())


def test_review_deadline_when_a_lookup_hangs(tmp_path: Path):
    fake = FakeAPIServer()
    config = tmp_path / "kubeconfig"
    config.write_text(fake.kubeconfig())
    env = {"INSTANCETYPE_WEBHOOK_LOOKUP_TIMEOUT": "5"}
    try:
        for action, allowed in (("deny", False), ("allow", True)):
            with serve(tmp_path, "--kubeconfig", str(config), "--policy", "expand", "--review-deadline", "0.5",
                       "--deadline-action", action, env=env) as server, server.client() as client:
                deadline = time.monotonic() + 10
                while client.get("/readyz").status_code != 200 and time.monotonic() < deadline:
                    time.sleep(0.1)
                fake.hang_gets = 3  # a cache miss now waits on the API server
                started = time.monotonic()
                resp = _post(client, review(VM))
                assert time.monotonic() - started < 2.5
                assert resp["allowed"] is allowed and "patch" not in resp
                text = resp["warnings"][0] if allowed else resp["status"]["message"]
                assert "0.5s deadline" in text
                fake.hang_gets = 0
    finally:
        fake.stop()
