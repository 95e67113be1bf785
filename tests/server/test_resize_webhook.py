"""Resizing through the webhook: the real server (uvicorn, TLS, policy `expand`, bundled
catalogue) admits writes sent by the strict fake API server, which applies the returned JSONPatch to
the object as the real one does. The writes are what `kubectl` sends: a create, then a merge patch
(`kubectl patch vm web --type merge -p '{"spec":{"instancetype":{"name":"u1.2xlarge"}}}'`)."""
from __future__ import annotations

import copy
from collections.abc import Iterator

import httpx
import pytest

from instancetype_webhook.admission.policy import PROVENANCE_KEY
from tests.fakeapi.apiserver import FakeAPIServer
from tests.kit.server import Server, serve

VMS = "/apis/kubevirt.io/v1/namespaces/apps/virtualmachines"
MERGE = {"Content-Type": "application/merge-patch+json"}
USER_DATA = "#cloud-config\nusers:\n  - name: ops\n"
WEB = {
    "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
    "metadata": {"name": "web", "namespace": "apps", "labels": {"app": "web"},
                 "annotations": {"example.com/owner": "team-a"}},
    "spec": {
        "runStrategy": "Halted", "instancetype": {"name": "u1.medium"}, "preference": {"name": "fedora"},
        "template": {"metadata": {"labels": {"app": "web"}}, "spec": {
            "domain": {"devices": {"disks": [{"name": "rootdisk", "bootOrder": 1}]}},
            "volumes": [{"name": "rootdisk", "containerDisk": {"image": "quay.io/containerdisks/fedora:41"}},
                        {"name": "cloudinit", "cloudInitNoCloud": {"userData": USER_DATA}}]}},
    },
}
SEVEN = {  # the design discussion's VM: written flat by hand with 7 CPUs
    "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
    "metadata": {"name": "seven", "namespace": "apps"},
    "spec": {"runStrategy": "Halted", "template": {"spec": {
        "domain": {"cpu": {"sockets": 7}, "memory": {"guest": "14Gi"},
                   "devices": {"disks": [{"name": "rootdisk", "disk": {"bus": "virtio"}}]}},
        "volumes": [{"name": "rootdisk", "containerDisk": {"image": "quay.io/containerdisks/fedora:41"}}]}}},
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serve(tmp_path_factory.mktemp("resize"), "--policy", "expand") as srv:
        yield srv


@pytest.fixture
def fake(server: Server) -> Iterator[FakeAPIServer]:
    fake = FakeAPIServer()
    fake.admission(server.url + "/mutate", server.url + "/validate", ca=str(server.certs.ca))
    try:
        yield fake
    finally:
        fake.stop()


@pytest.fixture
def api(fake: FakeAPIServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=fake.url, timeout=15) as client:
        yield client


def _create(api: httpx.Client, vm: dict) -> dict:
    resp = api.post(VMS, json=vm)
    assert resp.status_code == 201, resp.text
    return resp.json()


def _comparable(vm: dict) -> dict:
    """The stored VM without what the API server writes itself, and without the status (KubeVirt's to write:
    the API server keeps the stored one on a VM write, whatever the webhook's patch puts there)."""
    out = copy.deepcopy(vm)
    for key in ("resourceVersion", "generation", "uid", "creationTimestamp"):
        out["metadata"].pop(key, None)
    out.pop("status", None)
    return out


def test_kubectl_patch_to_a_bigger_instance_type(api: httpx.Client) -> None:
    stored = _create(api, WEB)
    assert "instancetype" not in stored["spec"]
    assert stored["spec"]["template"]["spec"]["domain"]["cpu"]["sockets"] == 1
    resp = api.patch(f"{VMS}/web", headers=MERGE, json={"spec": {"instancetype": {"name": "u1.2xlarge"}}})
    assert resp.status_code == 200, resp.text
    resized = resp.json()
    domain = resized["spec"]["template"]["spec"]["domain"]
    assert (domain["cpu"]["sockets"], domain["memory"]["guest"]) == (8, "32Gi")
    assert "instancetype" not in resized["spec"] and "preference" not in resized["spec"]
    # the same as a fresh expansion with u1.2xlarge (another name, same owner's fields)
    fresh = _create(api, {**WEB, "metadata": {**WEB["metadata"], "name": "fresh"},
                          "spec": {**WEB["spec"], "instancetype": {"name": "u1.2xlarge"}}})
    fresh["metadata"]["name"] = "web"
    assert _comparable(resized) == _comparable(fresh)
    # the owner's own fields are all there
    assert resized["metadata"]["labels"] == {"app": "web"}
    assert resized["metadata"]["annotations"]["example.com/owner"] == "team-a"
    assert resized["spec"]["template"]["metadata"]["labels"] == {"app": "web"}
    assert domain["devices"]["disks"][0]["bootOrder"] == 1
    assert resized["spec"]["template"]["spec"]["volumes"][1]["cloudInitNoCloud"]["userData"] == USER_DATA
    assert '"name":"u1.2xlarge"' in resized["metadata"]["annotations"][PROVENANCE_KEY]
    # and back down again
    back = api.patch(f"{VMS}/web", headers=MERGE, json={"spec": {"instancetype": {"name": "u1.medium"}}}).json()
    assert _comparable({**back, "metadata": {**back["metadata"]}})["spec"] == _comparable(stored)["spec"]


def test_hand_written_vm_resized_to_cx1_is_stored_flat_with_the_warning(api: httpx.Client) -> None:
    _create(api, SEVEN)
    resp = api.patch(f"{VMS}/seven", headers=MERGE, json={"spec": {"instancetype": {"name": "cx1.8xlarge"}}})
    assert resp.status_code == 200, resp.text
    stored = resp.json()
    assert "instancetype" not in stored["spec"]
    cpu = stored["spec"]["template"]["spec"]["domain"]["cpu"]
    assert cpu["sockets"] == 32 and cpu["dedicatedCpuPlacement"] is True and cpu["maxSockets"] == 32
    assert stored["spec"]["template"]["spec"]["domain"]["memory"] == {"guest": "64Gi", "hugepages": {"pageSize": "2Mi"}}
    warnings = resp.headers.get_list("warning")
    assert '299 - "cx1.8xlarge replaced hand-written cpu.sockets 7 -> 32"' in warnings
    assert '299 - "cx1.8xlarge replaced hand-written memory.guest 14Gi -> 64Gi"' in warnings
    assert PROVENANCE_KEY in stored["metadata"]["annotations"]


def test_a_hand_edited_owned_field_is_refused(api: httpx.Client) -> None:
    _create(api, WEB)
    edited = api.patch(f"{VMS}/web", headers=MERGE,
                       json={"spec": {"template": {"spec": {"domain": {"cpu": {"sockets": 2}}}}}})
    assert edited.status_code == 200, edited.text  # a flat VM: any owner's edit is fine
    resp = api.patch(f"{VMS}/web", headers=MERGE, json={"spec": {"instancetype": {"name": "u1.2xlarge"}}})
    assert resp.status_code == 422, resp.text
    status = resp.json()
    assert status["message"] == (
        'admission webhook "instancetype-webhook.kubevirt.io" denied the request: VM field(s) '
        "spec.template.spec.domain.cpu.sockets conflicts with selected instance type: "
        "2 was set by hand, u1.medium had set 1")
    assert status["details"]["causes"] == [{
        "reason": "FieldValueInvalid", "field": "spec.template.spec.domain.cpu.sockets",
        "message": "VM field(s) spec.template.spec.domain.cpu.sockets conflicts with selected instance type: "
                   "2 was set by hand, u1.medium had set 1"}]
    assert api.get(f"{VMS}/web").json()["spec"]["template"]["spec"]["domain"]["cpu"]["sockets"] == 2


def test_create_and_unchanged_matchers_stay_upstream_conflicts(api: httpx.Client) -> None:
    both = copy.deepcopy(SEVEN)
    both["metadata"]["name"] = "both"
    both["spec"]["instancetype"] = {"name": "cx1.8xlarge"}
    resp = api.post(VMS, json=both)
    assert resp.status_code == 422
    assert "spec.template.spec.domain.cpu.sockets conflicts with selected instance type" in resp.json()["message"]
    assert "was set by hand" not in resp.json()["message"]


def test_preview_resizes_as_the_update_would(api: httpx.Client, server: Server) -> None:
    stored = _create(api, {**WEB, "metadata": {**WEB["metadata"], "name": "pre"}})
    with server.client() as client:
        resp = client.post("/preview", params={"instancetype": "u1.2xlarge"}, json=stored)
        assert resp.status_code == 200, resp.text
        out = resp.json()
        assert out["allowed"] and out["replaced"] == [] and out["warnings"] == []
        updated = api.patch(f"{VMS}/pre", headers=MERGE, json={"spec": {"instancetype": {"name": "u1.2xlarge"}}}).json()
        assert _comparable(out["vm"]) == _comparable(updated)
        assert {op["path"] for op in out["patch"]} >= {"/spec/template/spec/domain/cpu/sockets"}
        assert "<domain" in (out.get("domainXML") or "")
        hand = client.post("/preview", params={"instancetype": "cx1.8xlarge"}, json=SEVEN).json()
        assert hand["allowed"] and hand["replaced"][0] == {"field": "spec.template.spec.domain.cpu.sockets", "old": 7}
        assert "cx1.8xlarge replaced hand-written cpu.sockets 7 -> 32" in hand["warnings"]
        refused = client.post("/preview", params={"instancetype": "u1.colossal"}, json=stored).json()
        assert not refused["allowed"] and refused["error"]["kind"] == "notFound" and "vm" not in refused
        bad = client.post("/preview", params={"instancetype": "Kind/"}, json=stored)
        assert bad.status_code == 422 and bad.json()["detail"][0]["loc"] == ["query", "instancetype"]


def test_an_update_keeping_the_matchers_stays_upstreams_conflict(fake: FakeAPIServer, api: httpx.Client) -> None:
    kept = copy.deepcopy(WEB)  # stored before the webhook was installed: it still references u1.medium
    kept["metadata"]["name"] = "kept"
    fake.add(kept)
    resp = api.patch(f"{VMS}/kept", headers=MERGE,
                     json={"spec": {"template": {"spec": {"domain": {"cpu": {"sockets": 2}}}}}})
    assert resp.status_code == 422, resp.text
    assert resp.json()["message"].endswith(
        "VM field(s) spec.template.spec.domain.cpu.sockets conflicts with selected instance type")
    assert api.get(f"{VMS}/kept").json()["spec"]["instancetype"] == {"name": "u1.medium"}


def test_reapplying_the_original_manifest_is_a_no_op(api: httpx.Client) -> None:
    """`kubectl apply` of the same manifest again puts the matchers back on the flat VM (a 3-way merge
    keeps the flat fields): the resize re-flattens to exactly the stored VM instead of a conflict."""
    stored = _create(api, {**WEB, "metadata": {**WEB["metadata"], "name": "again"}})
    resp = api.patch(f"{VMS}/again", headers=MERGE, json={"spec": {
        "instancetype": WEB["spec"]["instancetype"], "preference": WEB["spec"]["preference"]}})
    assert resp.status_code == 200, resp.text
    assert resp.json() == stored and resp.headers.get("warning") is None
