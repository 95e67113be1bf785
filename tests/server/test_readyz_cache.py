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
from tests.fakeapi.apiserver import FakeAPIServer
from tests.kit.builders import instancetype
from tests.kit.wait import wait_for

RESOURCE = "virtualmachineclusterinstancetypes"


def test_readyz_follows_the_cache_through_an_outage(tmp_path: Path):
    fake = FakeAPIServer()
    config = tmp_path / "kubeconfig"
    config.write_text(fake.kubeconfig())
    fake.add(instancetype("u1", 2))
    source = ClusterSource.from_config(kubeconfig=config, backoff_max=0.3, stale_after=1.0)
    source.start()
    try:
        assert source.wait_synced(10)
        hook = Webhook(ctx=ReviewContext(source=source), ready=source.ready, cache_status=source.cache_status)
        client = TestClient(create_api(hook))
        ready = client.get("/readyz")
        assert ready.status_code == 200 and ready.json()["referenceCache"][RESOURCE]["inSync"] is True
        fake.stop()
        wait_for(lambda: client.get("/readyz").status_code == 503, 10, "/readyz 503 while the API server is away")
        cache = client.get("/readyz").json()["referenceCache"][RESOURCE]
        assert cache["inSync"] is False and cache["outOfSyncSeconds"] > 1.0 and cache["reason"]
        fake.start()
        wait_for(lambda: client.get("/readyz").status_code == 200, 10, "/readyz 200 once it is back")
        assert client.get("/readyz").json()["referenceCache"][RESOURCE] == {"inSync": True, "outOfSyncSeconds": 0}
    finally:
        source.stop()
        fake.stop()
