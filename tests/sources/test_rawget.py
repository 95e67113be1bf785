"""instancetype_webhook.sources.rawget: built-in GETs shaped like the generated API methods, against the fake API
server."""
from __future__ import annotations

import orjson
import pytest
from kubernetes import client as k8s
from kubernetes.client.exceptions import ApiException

from instancetype_webhook.sources.rawget import BuiltinReads, raw_get
from tests.fakeapi.apiserver import FakeAPIServer


@pytest.fixture
def api():
    fake = FakeAPIServer()
    fake.add({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "apps", "labels": {"a": "b"}}})
    fake.add({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
              "metadata": {"name": "root.disk", "namespace": "apps"},
              "spec": {"resources": {"requests": {"storage": "1Gi"}}}})
    fake.add_revision({"metadata": {"name": "r1", "namespace": "apps"}, "data": {}, "revision": 1})
    configuration = k8s.Configuration(host=fake.url)
    configuration.api_key = {"authorization": "Bearer t0ken"}
    yield fake, k8s.ApiClient(configuration)
    fake.stop()


def test_reads_like_the_generated_methods(api):
    fake, client = api
    reads = BuiltinReads(client)
    resp = reads.list_namespace(limit=1, _preload_content=False, _request_timeout=(2, 2))
    doc = orjson.loads(resp.data)
    resp.release_conn()
    assert doc["kind"] == "NamespaceList" and doc["items"][0]["metadata"]["labels"] == {"a": "b"}
    assert fake.requests[-1] == "GET /api/v1/namespaces"
    pvc = orjson.loads(reads.read_namespaced_persistent_volume_claim("root.disk", "apps").data)
    assert pvc["spec"]["resources"]["requests"]["storage"] == "1Gi"  
    assert orjson.loads(reads.read_namespaced_controller_revision("r1", "apps").data)["revision"] == 1


def test_errors_and_watch_parameters(api):
    fake, client = api
    with pytest.raises(ApiException) as err:
        BuiltinReads(client).read_namespaced_controller_revision("nope", "apps")
    assert err.value.status == 404 and orjson.loads(err.value.body)["details"]["name"] == "nope"
    resp = raw_get(client, "/api/v1/namespaces")(watch=True, resource_version="100", timeout_seconds=1,
                                                 allow_watch_bookmarks=False, _preload_content=False)
    first = next(iter(resp.stream(65536)))
    resp.release_conn()
    assert fake.requests[-1] == "WATCH /api/v1/namespaces" and b'"type":' in first
