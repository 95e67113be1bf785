"""/readyz tells the reference cache's state per resource (the live ClusterSource against the strict fake API
server): in sync while the watches hold; out of sync, with the reason, while the API server is away, and not
ready past the staleness bound; in sync again once it is back."""
from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from instancetype_webhook.admission.context import ReviewContext
from instancetype_webhook.server.app import create_api
from instancetype_webhook.server.asgi import Webhook
from instancetype_webhook.sources.cluster import ClusterSource
from tests.sources.fake_apiserver import FakeAPIServer
from tests.sources.test_cluster import eventually, it

RESOURCE = "virtualmachineclusterinstancetypes"


def test_readyz_follows_the_cache_through_an_outage(tmp_path: Path):
    fake = FakeAPIServer()
    config = tmp_path / "kubeconfig"
    config.write_text(fake.kubeconfig())
    fake.add(it("u1", 2))
    source = ClusterSource.from_config(kubeconfig=config, backoff_max=0.3, stale_after=1.0)
    source.start()
    try:
        assert source.wait_synced(10)
        hook = Webhook(ctx=ReviewContext(source=source), ready=source.ready, cache_status=source.cache_status)
        client = TestClient(create_api(hook))
        ready = client.get("/readyz")
        assert ready.status_code == 200 and ready.json()["referenceCache"][RESOURCE]["inSync"] is True
        fake.stop()
        eventually(lambda: client.get("/readyz").status_code == 503)
        cache = client.get("/readyz").json()["referenceCache"][RESOURCE]
        assert cache["inSync"] is False and cache["outOfSyncSeconds"] > 1.0 and cache["reason"]
        fake.start()
        eventually(lambda: client.get("/readyz").status_code == 200, timeout=10)
        assert client.get("/readyz").json()["referenceCache"][RESOURCE] == {"inSync": True, "outOfSyncSeconds": 0}
    finally:
        source.stop()
        fake.stop()
