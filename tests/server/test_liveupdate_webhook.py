"""Live-update warnings through the webhook: the real server (uvicorn, TLS) reads the strict fake API server
(`--kubeconfig`), which sends it the writes kubectl makes and returns its warnings as `Warning` headers.
The VM runs (status, revisions, VMI as virt-controller leaves them); an UPDATE that resizes it says what
KubeVirt will do, read from the VMI on demand; a CREATE, or an UPDATE that leaves the template and the
matchers alone, never reads the VMI."""
from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest

from tests.fakeapi.apiserver import FakeAPIServer
from tests.fakeapi.running import add_catalog, start_running
from tests.kit.server import Server, serve

VMS = "/apis/kubevirt.io/v1/namespaces/apps/virtualmachines"
VMI_GET = "GET /apis/kubevirt.io/v1/namespaces/apps/virtualmachineinstances/web"
MERGE = {"Content-Type": "application/merge-patch+json"}
WEB = {
    "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
    "metadata": {"name": "web", "namespace": "apps"},
    "spec": {"runStrategy": "Always", "instancetype": {"name": "u1.medium"}, "preference": {"name": "fedora"},
             "template": {"spec": {"domain": {"devices": {}}, "volumes": [
                 {"name": "rootdisk", "containerDisk": {"image": "quay.io/containerdisks/fedora:41"}}]}}},
}


def _serve(tmp, fake: FakeAPIServer, *args: str, env: dict[str, str] | None = None):
    config = tmp / "kubeconfig"
    config.write_text(fake.kubeconfig())
    return serve(tmp, "--kubeconfig", str(config), *args, env=env)


def _ready(server: Server) -> None:
    with server.client() as client:
        deadline = time.monotonic() + 15
        while client.get("/readyz").status_code != 200 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert client.get("/readyz").status_code == 200


@pytest.fixture
def cluster(tmp_path) -> Iterator[tuple[FakeAPIServer, httpx.Client]]:
    fake = FakeAPIServer()
    add_catalog(fake)
    try:
        with _serve(tmp_path, fake) as server:
            _ready(server)
            fake.admission(server.url + "/mutate", server.url + "/validate", ca=str(server.certs.ca))
            with httpx.Client(base_url=fake.url, timeout=15) as api:
                yield fake, api
    finally:
        fake.stop()


def _warnings(resp: httpx.Response) -> list[str]:
    assert resp.status_code in (200, 201), resp.text
    return [w.removeprefix('299 - "').removesuffix('"') for w in resp.headers.get_list("warning")]


def test_resize_of_a_running_vm_warns_what_goes_live(cluster) -> None:
    fake, api = cluster
    created = api.post(VMS, json=WEB)
    assert _warnings(created) == [] and fake.count(VMI_GET) == 0  # a CREATE never reads a VMI
    start_running(fake, "apps", "web")
    resized = api.patch(f"{VMS}/web", headers=MERGE, json={"spec": {"instancetype": {"name": "u1.large"}}})
    assert _warnings(resized) == ["live update: CPU sockets 1 -> 2 will be hot-plugged",
                                  "live update: guest memory 4Gi -> 8Gi will be hot-plugged"]
    assert fake.count(VMI_GET) == 1


def test_restart_and_refusal_are_said_with_upstreams_messages(cluster) -> None:
    fake, api = cluster
    api.post(VMS, json=WEB)
    start_running(fake, "apps", "web")
    smaller = api.patch(f"{VMS}/web", headers=MERGE, json={"spec": {"instancetype": {"name": "u1.small"}}})
    assert _warnings(smaller) == ["live update: needs a restart: memory updated in template spec to a value lower "
                                  "than what the VM started with"]
    dedicated = api.patch(f"{VMS}/web", headers=MERGE, json={"spec": {"instancetype": {"name": "cx1.large"}}})
    assert _warnings(dedicated) == [
        "live update: needs a restart: a non-live-updatable field was changed in the template spec"]


def test_updates_that_leave_the_template_alone_make_no_lookup(cluster) -> None:
    fake, api = cluster
    api.post(VMS, json=WEB)
    start_running(fake, "apps", "web")
    labelled = api.patch(f"{VMS}/web", headers=MERGE, json={"metadata": {"labels": {"team": "a"}}})
    strategy = api.patch(f"{VMS}/web", headers=MERGE, json={"spec": {"runStrategy": "Manual"}})
    assert _warnings(labelled) == [] and _warnings(strategy) == []
    assert fake.count(VMI_GET) == 0


def test_a_stopped_vm_gets_no_warning_and_no_lookup(cluster) -> None:
    fake, api = cluster
    api.post(VMS, json=WEB)  # never started: no status
    resized = api.patch(f"{VMS}/web", headers=MERGE, json={"spec": {"instancetype": {"name": "u1.large"}}})
    assert _warnings(resized) == [] and fake.count(VMI_GET) == 0


def test_a_vmi_not_read_in_time_is_said_not_guessed(tmp_path) -> None:
    fake = FakeAPIServer()
    add_catalog(fake)
    try:
        with _serve(tmp_path, fake, env={"INSTANCETYPE_WEBHOOK_LOOKUP_TIMEOUT": "0.5"}) as server:
            _ready(server)
            fake.admission(server.url + "/mutate", server.url + "/validate", ca=str(server.certs.ca))
            with httpx.Client(base_url=fake.url, timeout=15) as api:
                api.post(VMS, json=WEB)
                start_running(fake, "apps", "web")
                # a first resize reads (and caches) the revisions; the VMI is read live every time
                assert _warnings(api.patch(f"{VMS}/web", headers=MERGE,
                                           json={"spec": {"instancetype": {"name": "u1.large"}}}))
                fake.hang_gets = 1.5  # every single-object GET now waits longer than the lookup timeout
                resized = api.patch(f"{VMS}/web", headers=MERGE,
                                    json={"spec": {"instancetype": {"name": "u1.small"}}})
                fake.hang_gets = 0
                warnings = _warnings(resized)
    finally:
        fake.stop()
    assert len(warnings) == 1 and warnings[0].startswith("live update: not predicted: the running VMI was not read "
                                                        "in time (GET virtualmachineinstances apps/web")


def test_a_revision_not_read_in_time_is_said_too(tmp_path) -> None:
    from instancetype_webhook.admission.context import ReviewContext
    from instancetype_webhook.admission.liveupdate import live_update_warnings
    from instancetype_webhook.sources.cluster import SourceUnavailable

    class Slow:  # a cluster source whose VMI answers but whose revisions time out
        default_namespace = "apps"

        def get(self, kind, name, namespace=None):
            return None

        def get_vmi(self, name, namespace):
            return {"metadata": {"name": name}, "spec": {}, "status": {}}

        def get_revision(self, name, namespace):
            raise SourceUnavailable(f"GET controllerrevisions {namespace}/{name}: ReadTimeoutError")

    old = {**WEB, "status": {"printableStatus": "Running"}}
    new = {**old, "spec": {**old["spec"], "instancetype": {"name": "u1.large"}}}
    warnings = live_update_warnings(new, old, "UPDATE", "apps", ReviewContext(source=Slow()))
    assert warnings == ["live update: not predicted: the VMI's start revision was not read in time "
                        "(GET controllerrevisions apps/revision-start-vm--1: ReadTimeoutError)"]


def test_under_expand_the_flat_vm_the_webhook_stores_is_planned(tmp_path) -> None:
    fake = FakeAPIServer()
    add_catalog(fake)
    try:
        with _serve(tmp_path, fake, "--policy", "expand") as server:
            _ready(server)
            fake.admission(server.url + "/mutate", server.url + "/validate", ca=str(server.certs.ca))
            with httpx.Client(base_url=fake.url, timeout=15) as api:
                created = api.post(VMS, json=WEB)
                assert "instancetype" not in created.json()["spec"]  # stored flat
                start_running(fake, "apps", "web")
                resized = api.patch(f"{VMS}/web", headers=MERGE,
                                    json={"spec": {"instancetype": {"name": "u1.large"}}})
                stored = resized.json()
    finally:
        fake.stop()
    assert "instancetype" not in stored["spec"] and stored["spec"]["template"]["spec"]["domain"]["cpu"]["sockets"] == 2
    assert [w for w in _warnings(resized) if w.startswith("live update:")] == [
        "live update: CPU sockets 1 -> 2 will be hot-plugged",
        "live update: guest memory 4Gi -> 8Gi will be hot-plugged"]
