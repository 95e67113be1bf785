"""The real server follows the KubeVirt CR of the (fake) cluster live: changing its default network binding
changes the next VM's flattening with no restart; /metrics and /readyz say which configuration is in use."""
from __future__ import annotations

import base64
import copy
import json
from pathlib import Path

import httpx
import jsonpatch
import orjson

from tests.fakeapi.apiserver import FakeAPIServer
from tests.kit.admission import SMALL
from tests.kit.admission import SMALL_VM as VM
from tests.kit.admission import kubevirt_cr as kubevirt
from tests.kit.builders import review
from tests.kit.server import serve
from tests.kit.wait import wait_for


def flatten(client: httpx.Client, vm: dict) -> dict:
    resp = client.post("/mutate", content=orjson.dumps(review(vm)))
    assert resp.status_code == 200, resp.text
    answer = resp.json()["response"]
    assert answer["allowed"], answer
    return jsonpatch.apply_patch(vm, json.loads(base64.b64decode(answer["patch"])), in_place=False)


def interfaces(flat: dict) -> list[dict]:
    return flat["spec"]["template"]["spec"]["domain"]["devices"]["interfaces"]


def metric(server, name: str) -> float:
    for line in httpx.get(f"{server.metrics_url}/metrics").text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError(f"{name} not in /metrics")



def test_the_kubevirt_cr_is_followed_live(tmp_path: Path):
    fake = FakeAPIServer()
    fake.add(SMALL)
    fake.add(kubevirt({"network": {"defaultNetworkInterface": "bridge"}}))
    config = tmp_path / "kubeconfig"
    config.write_text(fake.kubeconfig())
    try:
        with serve(tmp_path, "--kubeconfig", str(config), "--policy", "expand") as server, server.client() as client:
            wait_for(lambda: client.get("/readyz").status_code == 200)
            configuration = client.get("/readyz").json()["clusterConfiguration"]
            assert configuration.startswith("KubeVirt kubevirt/kubevirt generation 1")
            assert interfaces(flatten(client, VM)) == [{"name": "default", "bridge": {}}]
            assert metric(server, "instancetype_webhook_cluster_configuration_generation") == 1

            stored = fake.get("KubeVirt", "kubevirt", "kubevirt")
            changed = copy.deepcopy(stored)
            changed["spec"]["configuration"]["network"]["defaultNetworkInterface"] = "masquerade"
            fake.add(changed)  # an update: watchers see MODIFIED, generation 2
            wait_for(lambda: metric(server, "instancetype_webhook_cluster_configuration_generation") == 2)
            assert interfaces(flatten(client, VM)) == [{"name": "default", "masquerade": {}}]

            # an invalid configuration is not used: the last valid one (masquerade) stays, as in virt-api
            broken = copy.deepcopy(fake.get("KubeVirt", "kubevirt", "kubevirt"))
            broken["spec"]["configuration"]["network"]["defaultNetworkInterface"] = "sriov"
            fake.add(broken)
            wait_for(lambda: "is invalid" in server.logs())
            assert interfaces(flatten(client, VM)) == [{"name": "default", "masquerade": {}}]
            assert metric(server, "instancetype_webhook_cluster_configuration_generation") == 2
    finally:
        fake.stop()


def test_without_a_kubevirt_cr_the_defaults_apply_and_readyz_says_so(tmp_path: Path):
    fake = FakeAPIServer()
    fake.add(SMALL)
    fake.add(kubevirt({"network": {"defaultNetworkInterface": "masquerade"}}, phase=""))  # not deployed yet
    config = tmp_path / "kubeconfig"
    config.write_text(fake.kubeconfig())
    try:
        with serve(tmp_path, "--kubeconfig", str(config), "--policy", "expand") as server, server.client() as client:
            wait_for(lambda: client.get("/readyz").status_code == 200)
            assert "KubeVirt's defaults apply" in client.get("/readyz").json()["clusterConfiguration"]
            assert interfaces(flatten(client, VM)) == [{"name": "default", "bridge": {}}]
            assert metric(server, "instancetype_webhook_cluster_configuration_generation") == 0
            assert "no KubeVirt CR with a status.phase yet" in server.logs()
            # virt-operator deploys it: from now on its configuration is used
            deployed = copy.deepcopy(fake.get("KubeVirt", "kubevirt", "kubevirt"))
            deployed["status"] = {"phase": "Deployed", "defaultArchitecture": "amd64"}
            fake.add(deployed)
            wait_for(lambda: metric(server, "instancetype_webhook_cluster_configuration_generation") >= 1)
            assert interfaces(flatten(client, VM)) == [{"name": "default", "masquerade": {}}]
    finally:
        fake.stop()


def test_a_cluster_without_kubevirt_runs_on_the_defaults(tmp_path: Path):
    fake = FakeAPIServer()
    fake.add(SMALL)
    fake.uninstall("kubevirt.io")
    config = tmp_path / "kubeconfig"
    config.write_text(fake.kubeconfig())
    try:
        with serve(tmp_path, "--kubeconfig", str(config), "--policy", "expand",
                   env={"INSTANCETYPE_WEBHOOK_CLUSTER_NETWORK_BINDING": "masquerade"}) as server, \
                server.client() as client:
            wait_for(lambda: client.get("/readyz").status_code == 200)
            status = client.get("/readyz").json()["clusterConfiguration"]
            assert "cannot list kubevirts (HTTP 404)" in status
            assert "INSTANCETYPE_WEBHOOK_CLUSTER_* settings apply" in status
            # the demoted environment setting applies while there is no KubeVirt CR
            assert interfaces(flatten(client, VM)) == [{"name": "default", "masquerade": {}}]
    finally:
        fake.stop()


def _revision(name: str, api_version: str, spec: dict) -> dict:
    return {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": {"name": name, "namespace": "apps"},
            "data": {"apiVersion": api_version, "kind": "VirtualMachineInstancetype",
                     "metadata": {"name": "small", "namespace": "apps"}, "spec": spec}, "revision": 1}


def test_stored_revisions_come_from_the_live_cluster(tmp_path: Path):
    """The ControllerRevision a VM pins is looked up in the cluster: its stored object wins over the live
    one, and one upstream cannot decode is refused with upstream's text."""
    fake = FakeAPIServer()
    fake.add(SMALL)  # live: 1 vCPU
    fake.add_revision(_revision("small-r1", "instancetype.kubevirt.io/v1beta1",
                                {"cpu": {"guest": 4}, "memory": {"guest": "4Gi"}}))
    fake.add_revision(_revision("small-old", "instancetype.kubevirt.io/v1alpha1",
                                {"cpu": {"guest": 2}, "memory": {"guest": "2Gi"}}))
    config = tmp_path / "kubeconfig"
    config.write_text(fake.kubeconfig())
    pinned = copy.deepcopy(VM)
    pinned["spec"]["instancetype"]["revisionName"] = "small-r1"
    try:
        with serve(tmp_path, "--kubeconfig", str(config), "--policy", "expandAll") as server, server.client() as client:
            wait_for(lambda: client.get("/readyz").status_code == 200)
            assert flatten(client, pinned)["spec"]["template"]["spec"]["domain"]["cpu"]["sockets"] == 4
            pinned["spec"]["instancetype"]["revisionName"] = "small-old"
            answer = client.post("/mutate", content=orjson.dumps(review(pinned))).json()["response"]
            assert not answer["allowed"] and answer["status"]["code"] == 400
            assert answer["status"]["message"] == (
                'failed to decode object in ControllerRevision: no kind "VirtualMachineInstancetype" is registered for '
                'version "instancetype.kubevirt.io/v1alpha1" in scheme '
                '"kubevirt.io/client-go/kubevirt/scheme/register.go:44"')
    finally:
        fake.stop()


def test_offline_a_kubevirt_object_in_the_catalogue_is_the_configuration(tmp_path: Path):
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    (catalog / "small.json").write_bytes(orjson.dumps(SMALL))
    offline = kubevirt({"network": {"defaultNetworkInterface": "masquerade"}}, phase="")  # no status needed offline
    (catalog / "kubevirt.json").write_bytes(orjson.dumps(offline))
    with serve(tmp_path, "--catalog", str(catalog), "--policy", "expand") as server, server.client() as client:
        assert client.get("/readyz").json()["clusterConfiguration"].startswith("KubeVirt kubevirt/kubevirt")
        assert interfaces(flatten(client, VM)) == [{"name": "default", "masquerade": {}}]


def test_offline_an_invalid_kubevirt_object_stops_serve(tmp_path: Path, monkeypatch, capsys, app_logging):
    from instancetype_webhook.cli import main

    catalog = tmp_path / "catalog"
    catalog.mkdir()
    (catalog / "kubevirt.json").write_bytes(orjson.dumps(kubevirt({"imagePullPolicy": "Sometimes"})))
    assert main(["serve", "--dev", "--port", "0", "--metrics-port", "0", "--catalog", str(catalog)]) == 2
    assert "invalid dev.imagePullPolicy in config: Sometimes" in capsys.readouterr().err
