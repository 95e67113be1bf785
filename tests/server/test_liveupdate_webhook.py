"""Live-update warnings end to end: the real server (uvicorn, TLS) reads the strict fake API server
(`--kubeconfig`; the cluster source's own `get_vmi`), which sends it the writes kubectl makes and returns its
warnings as `Warning` headers. The decision's cases: tests/admission/test_liveupdate.py."""
from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.fakeapi.apiserver import FakeAPIServer
from tests.fakeapi.running import add_catalog, start_running, webhook_for
from tests.kit.admission import WEB

VMS = "/apis/kubevirt.io/v1/namespaces/apps/virtualmachines"
VMI_GET = "GET /apis/kubevirt.io/v1/namespaces/apps/virtualmachineinstances/web"
MERGE = {"Content-Type": "application/merge-patch+json"}



@pytest.fixture
def cluster(tmp_path) -> Iterator[tuple[FakeAPIServer, httpx.Client]]:
    fake = FakeAPIServer()
    add_catalog(fake)
    try:
        with webhook_for(fake, tmp_path), httpx.Client(base_url=fake.url, timeout=15) as api:
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


def test_a_vmi_not_read_in_time_is_said_not_guessed(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cluster source's lookup timeout, for real: the fake's GETs hang longer than it."""
    monkeypatch.setenv("INSTANCETYPE_WEBHOOK_LOOKUP_TIMEOUT", "0.5")  # the server's environment (serve inherits it)
    fake = FakeAPIServer()
    add_catalog(fake)
    try:
        with webhook_for(fake, tmp_path), httpx.Client(base_url=fake.url, timeout=15) as api:
            api.post(VMS, json=WEB)
            start_running(fake, "apps", "web")
            # a first resize reads (and caches) the revisions; the VMI is read live every time
            assert _warnings(api.patch(f"{VMS}/web", headers=MERGE,
                                       json={"spec": {"instancetype": {"name": "u1.large"}}}))
            fake.hang_gets = 1.5  # every single-object GET now waits longer than the lookup timeout
            resized = api.patch(f"{VMS}/web", headers=MERGE, json={"spec": {"instancetype": {"name": "u1.small"}}})
            fake.hang_gets = 0
            warnings = _warnings(resized)
    finally:
        fake.stop()
    assert len(warnings) == 1 and warnings[0].startswith("live update: not predicted: the running VMI was not read "
                                                        "in time (GET virtualmachineinstances apps/web")
