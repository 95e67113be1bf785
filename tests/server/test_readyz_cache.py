"""/readyz tells the reference cache's state per resource (the live ClusterSource against the strict fake API
server), but readiness says whether this replica can serve, not whether the API server is reachable: an
outage past the staleness bound leaves the replica ready; a VM that references nothing is still admitted, one
that references an instance type gets the retryable refusal (504); in sync again once the API server is back."""
from __future__ import annotations

from pathlib import Path

import orjson
from fastapi.testclient import TestClient

from instancetype_webhook.admission.context import ReviewContext
from instancetype_webhook.server.app import create_app
from instancetype_webhook.server.asgi import Webhook
from instancetype_webhook.sources.cluster import ClusterSource
from tests.fakeapi.apiserver import FakeAPIServer
from tests.kit.admission import catalog_context
from tests.kit.builders import instancetype, review, vm
from tests.kit.wait import wait_for

RESOURCE = "virtualmachineclusterinstancetypes"


def answer(client: TestClient, obj: dict) -> dict:
    resp = client.post("/mutate", content=orjson.dumps(review(obj)))
    assert resp.status_code == 200
    return resp.json()["response"]


def test_readiness_outlives_an_outage_and_the_reviews_say_the_truth(tmp_path: Path):
    fake = FakeAPIServer()
    config = tmp_path / "kubeconfig"
    config.write_text(fake.kubeconfig())
    fake.add(instancetype("u1", 2))
    source = ClusterSource.from_config(kubeconfig=config, backoff_max=0.3, stale_after=1.0, lookup_timeout=1.0)
    source.start()
    try:
        assert source.wait_synced(10)
        hook = Webhook(ctx=ReviewContext(source=source, policy="expand"), ready=source.ready,
                       cache_status=source.cache_status, offload=True)
        client = TestClient(create_app(hook))
        ready = client.get("/readyz")
        assert ready.status_code == 200 and ready.json()["referenceCache"][RESOURCE]["inSync"] is True
        fake.stop()
        # past the staleness bound: the source is no longer `ready()`, the replica still is
        wait_for(lambda: not source.ready(), 10, "the source out of sync past its staleness bound")
        ready = client.get("/readyz")
        assert ready.status_code == 200 and ready.json()["status"] == "ready"
        cache = ready.json()["referenceCache"][RESOURCE]
        assert cache["inSync"] is False and cache["outOfSyncSeconds"] > 1.0 and cache["reason"]
        plain = answer(client, vm("plain", "apps"))
        assert plain["allowed"] is True
        sized = answer(client, vm("sized", "apps", instancetype="u1"))
        assert sized["allowed"] is False and sized["status"]["code"] == 504
        fake.start()
        wait_for(lambda: client.get("/readyz").json()["referenceCache"][RESOURCE]["inSync"], 10,
                 "in sync once the API server is back")
        assert client.get("/readyz").json()["referenceCache"][RESOURCE] == {"inSync": True, "outOfSyncSeconds": 0}
        assert answer(client, vm("sized", "apps", instancetype="u1"))["allowed"] is True
    finally:
        source.stop()
        fake.stop()


def test_a_replica_is_ready_after_its_first_sync_or_the_start_grace_and_not_while_draining():
    synced = [False]
    hook = Webhook(ctx=catalog_context("reference"), ready=lambda: synced[0], start_grace=3600)
    client = TestClient(create_app(hook))
    first = client.get("/readyz")
    assert first.status_code == 503 and "not synced" in first.json()["reason"]
    synced[0] = True
    assert client.get("/readyz").status_code == 200
    synced[0] = False  # out of sync later: still ready
    assert client.get("/readyz").status_code == 200
    hook.draining = True
    assert client.get("/readyz").json() == {"status": "not ready", "reason": "draining"}
    never = Webhook(ctx=catalog_context("reference"), ready=lambda: False, start_grace=0)
    assert TestClient(create_app(never)).get("/readyz").status_code == 200
