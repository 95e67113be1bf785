"""The thin VirtualMachine client of audit and sweep against the strict fake API server: the kubeconfig's
namespace, LIST pages and their continue tokens, GET (404 is None), PUT with the resourceVersion
precondition and dryRun, and every error as a typed KubeError."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from instancetype_webhook.sources.kube import Conflict, Expired, KubeError, VMClient
from tests.fakeapi.apiserver import FakeAPIServer
from tests.kit.fleet_cluster import vm


def client_for(fake: FakeAPIServer, tmp_path: Path, page_size: int = 2) -> VMClient:
    return VMClient.from_config(fake.kubeconfig_file(tmp_path), page_size=page_size)[0]


def test_the_namespace_is_the_current_contexts_or_default(fake, tmp_path):
    _, namespace = VMClient.from_config(fake.kubeconfig_file(tmp_path))
    assert namespace == "default"
    config = json.loads(fake.kubeconfig())
    config["contexts"][0]["context"]["namespace"] = "apps"
    path = tmp_path / "with-ns"
    path.write_text(json.dumps(config))
    client, namespace = VMClient.from_config(path, page_size=7, timeout=3)
    assert namespace == "apps" and (client.page_size, client.timeout) == (7, 3)
    assert client.host == fake.url


def test_path_quotes_and_scopes():
    assert VMClient.path(None) == "/apis/kubevirt.io/v1/virtualmachines"
    assert VMClient.path("apps") == "/apis/kubevirt.io/v1/namespaces/apps/virtualmachines"
    assert VMClient.path("apps", "a/b") == "/apis/kubevirt.io/v1/namespaces/apps/virtualmachines/a%2Fb"


def test_list_pages_through_every_vm_with_kind_and_api_version(fake, tmp_path):
    for i in range(5):
        fake.add(vm(f"vm-{i}", "apps" if i % 2 else "web"))
    client = client_for(fake, tmp_path)
    first = client.page(None)
    assert len(first.items) == 2 and first.next and first.remaining == 3 and first.resource_version
    names = [(v["metadata"]["namespace"], v["metadata"]["name"]) for v in client.list(None)]
    assert names == [("apps", "vm-1"), ("apps", "vm-3"), ("web", "vm-0"), ("web", "vm-2"), ("web", "vm-4")]
    assert all(v["kind"] == "VirtualMachine" and v["apiVersion"] == "kubevirt.io/v1" for v in client.list("web"))
    assert [v["metadata"]["name"] for v in client.list("apps")] == ["vm-1", "vm-3"]
    assert client.page("none").items == [] and client.page("none").next is None


def test_an_old_continue_token_is_expired(fake, tmp_path):
    for i in range(3):
        fake.add(vm(f"vm-{i}", "apps"))
    client = client_for(fake, tmp_path)
    token = client.page("apps").next
    fake.add(vm("vm-9", "apps"))
    fake.compact()
    with pytest.raises(Expired) as caught:
        client.page("apps", token)
    assert caught.value.status == 410 and isinstance(caught.value, KubeError)


def test_get_answers_none_for_a_missing_vm(fake, tmp_path):
    fake.add(vm("web", "apps"))
    client = client_for(fake, tmp_path)
    assert client.get("apps", "web")["kind"] == "VirtualMachine"
    assert client.get("apps", "nope") is None
    assert client.requests == 2


def test_replace_needs_the_resource_version_and_conflicts_when_it_is_stale(fake, tmp_path):
    fake.add(vm("web", "apps"))
    client = client_for(fake, tmp_path)
    stored = client.get("apps", "web")
    with pytest.raises(ValueError, match="resourceVersion"):
        client.replace({**stored, "metadata": {**stored["metadata"], "resourceVersion": ""}})
    labelled = {**stored, "metadata": {**stored["metadata"], "labels": {"tier": "gold"}}}
    dry = client.replace(labelled, dry_run=True)
    assert dry["metadata"]["labels"] == {"tier": "gold"}
    assert "tier" not in (fake.get("virtualmachines", "web", "apps")["metadata"].get("labels") or {})
    written = client.replace(labelled)
    assert written["metadata"]["resourceVersion"] != stored["metadata"]["resourceVersion"]
    assert fake.get("virtualmachines", "web", "apps")["metadata"]["labels"] == {"tier": "gold"}
    with pytest.raises(Conflict) as caught:
        client.replace({**labelled, "metadata": {**labelled["metadata"], "labels": {"tier": "x"}}})
    assert caught.value.status == 409 and "modified" in caught.value.message


def test_a_refusal_and_an_unreachable_server_are_kube_errors(fake, tmp_path):
    client = client_for(fake, tmp_path)
    fake.forbid("list", "virtualmachines")
    with pytest.raises(KubeError) as caught:
        client.page("apps")
    assert caught.value.status == 403 and str(caught.value).startswith("HTTP 403 Forbidden: ")
    fake.stop()
    with pytest.raises(KubeError) as caught:
        client.get("apps", "web")
    assert caught.value.status == 0 and str(caught.value).startswith("GET /apis/kubevirt.io/v1/namespaces/apps")


def test_kube_error_text():
    assert str(KubeError(404, "NotFound", "gone")) == "HTTP 404 NotFound: gone"
    assert str(KubeError(0, "ConnectError", "refused")) == "refused"
    assert issubclass(Conflict, KubeError) and issubclass(Expired, KubeError)


def test_set_pool_size_makes_room_for_the_workers(fake, tmp_path):
    fake.add(vm("web", "apps"))
    client = client_for(fake, tmp_path)
    client.set_pool_size(8)
    assert client.api.configuration.connection_pool_maxsize == 8
    assert client.get("apps", "web") is not None
