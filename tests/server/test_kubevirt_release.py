"""The webhook answers as the KubeVirt release the cluster's KubeVirt CR reports (status.observedKubeVirtVersion),
follows it through an upgrade (answering as the observed release while the target differs) and says which
release it answers as in /readyz, /metrics, the logs and the provenance annotation. No CR, no status or a
version that names no supported release: main's rules, saying why. `--kubevirt-version R` overrides."""
from __future__ import annotations

import base64
import copy
import json
import re
from pathlib import Path

import httpx
import orjson
import pytest

from instancetype_webhook.kubevirt.releases import MAIN
from instancetype_webhook.sources.kubevirt_cr import ClusterConfiguration
from tests.fakeapi.apiserver import FakeAPIServer
from tests.kit.admission import SMALL
from tests.kit.admission import SMALL_VM as VM
from tests.kit.admission import kubevirt_cr as kubevirt
from tests.kit.builders import review
from tests.kit.server import serve
from tests.kit.wait import wait_for

PROVENANCE = "instancetype-webhook.kubevirt.io/expanded-from"


def on_release(observed: str | None, target: str | None = None, phase: str = "Deployed") -> dict:
    cr = kubevirt({}, phase=phase)
    if observed is not None:
        cr["status"]["observedKubeVirtVersion"] = observed
        cr["status"]["targetKubeVirtVersion"] = target or observed
    return cr


def readyz_release(client: httpx.Client) -> dict:
    resp = client.get("/readyz")
    assert resp.status_code == 200, resp.text
    return resp.json()["kubevirt"]


def release_metric(server) -> list[dict[str, str]]:
    lines = httpx.get(f"{server.metrics_url}/metrics").text.splitlines()
    found = [line for line in lines if line.startswith("instancetype_webhook_kubevirt_release_info{")]
    return [dict(re.findall(r'(\w+)="([^"]*)"', line)) for line in found if line.endswith(" 1.0")]


def provenance_release(client: httpx.Client) -> str:
    answer = client.post("/mutate", content=orjson.dumps(review(VM))).json()["response"]
    assert answer["allowed"], answer
    patch = json.loads(base64.b64decode(answer["patch"]))
    annotations = [op["value"] for op in patch if op["path"].startswith("/metadata/annotations")]
    value = annotations[0] if isinstance(annotations[0], str) else annotations[0][PROVENANCE]
    return json.loads(value)["kubevirt"]


@pytest.fixture
def fake():
    server = FakeAPIServer()
    server.add(SMALL)
    yield server
    server.stop()


def kubeconfig(tmp_path: Path, fake: FakeAPIServer) -> str:
    path = tmp_path / "kubeconfig"
    path.write_text(fake.kubeconfig())
    return str(path)


def test_the_release_the_cr_reports_and_an_upgrade(tmp_path: Path, fake: FakeAPIServer) -> None:
    fake.add(on_release("v1.8.4"))
    with serve(tmp_path, "--kubeconfig", kubeconfig(tmp_path, fake), "--policy", "expand") as server, \
            server.client() as client:
        wait_for(lambda: readyz_release(client)["release"] == "v1.8.4")
        status = readyz_release(client)
        assert status == {"release": "v1.8.4", "profile": "v1.8",
                          "source": "KubeVirt kubevirt/kubevirt status.observedKubeVirtVersion"}
        assert release_metric(server) == [{"release": "v1.8.4", "profile": "v1.8", "source": status["source"]}]
        assert provenance_release(client) == "v1.8.4"
        assert "KubeVirt release: KubeVirt v1.8.4 (profile v1.8)" in server.logs()

        # virt-operator starts the upgrade: the target moves first; the deployed release still answers
        upgrading = copy.deepcopy(fake.get("KubeVirt", "kubevirt", "kubevirt"))
        upgrading["status"]["targetKubeVirtVersion"] = "v1.9.0"
        fake.add(upgrading)
        wait_for(lambda: "note" in readyz_release(client))
        status = readyz_release(client)
        assert status["release"] == "v1.8.4"
        assert status["note"].startswith("upgrade under way from v1.8.4 to v1.9.0: answering as v1.8.4")
        assert provenance_release(client) == "v1.8.4"

        # the upgrade is done: the new release answers, with no note
        done = copy.deepcopy(fake.get("KubeVirt", "kubevirt", "kubevirt"))
        done["status"]["observedKubeVirtVersion"] = "v1.9.0"
        fake.add(done)
        wait_for(lambda: readyz_release(client)["release"] == "v1.9.0")
        assert "note" not in readyz_release(client)
        assert [m["release"] for m in release_metric(server)] == ["v1.9.0"]
        assert provenance_release(client) == "v1.9.0"


def test_an_explicit_release_overrides_the_cr(tmp_path: Path, fake: FakeAPIServer) -> None:
    fake.add(on_release("v1.8.4"))
    with serve(tmp_path, "--kubeconfig", kubeconfig(tmp_path, fake), "--policy", "expand",
               "--kubevirt-version", "v1.7.4") as server, server.client() as client:
        wait_for(lambda: "generation 1" in client.get("/readyz").json().get("clusterConfiguration", ""))
        assert readyz_release(client) == {"release": "v1.7.4", "profile": "v1.7", "source": "--kubevirt-version"}
        assert provenance_release(client) == "v1.7.4"


def test_a_cr_without_status_answers_as_main_and_says_so(tmp_path: Path, fake: FakeAPIServer) -> None:
    fake.add(on_release(None, phase=""))  # virt-operator has not seen it yet: no status at all
    with serve(tmp_path, "--kubeconfig", kubeconfig(tmp_path, fake), "--policy", "expand") as server, \
            server.client() as client:
        wait_for(lambda: "status.phase" in readyz_release(client).get("note", ""))
        status = readyz_release(client)
        assert status["release"] == "main" and status["source"] == "default"
        assert status["note"] == "no KubeVirt CR with a status.phase yet: answered as main"
        assert release_metric(server) == [{"release": "main", "profile": "main", "source": "default"}]
        assert "KubeVirt release: KubeVirt main (profile main); no KubeVirt CR with a status.phase" in server.logs()
        # deployed: its release answers from now on
        fake.add(on_release("v1.8.4"))
        wait_for(lambda: readyz_release(client)["release"] == "v1.8.4")


def test_no_kubevirt_at_all_answers_as_main_and_says_so(tmp_path: Path, fake: FakeAPIServer) -> None:
    fake.uninstall("kubevirt.io")
    with serve(tmp_path, "--kubeconfig", kubeconfig(tmp_path, fake), "--policy", "expand") as server, \
            server.client() as client:
        wait_for(lambda: "cannot list kubevirts" in readyz_release(client).get("note", ""))
        status = readyz_release(client)
        assert status["release"] == "main" and status["source"] == "default"
        assert status["note"].endswith(": answered as main")
        assert provenance_release(client) == "main"
        assert "Traceback" not in server.logs()


@pytest.mark.parametrize(("observed", "note"), [
    ("banana", "status.observedKubeVirtVersion: cannot parse KubeVirt version 'banana'"),
    ("v1.5.2", "status.observedKubeVirtVersion: KubeVirt v1.5.2 is older than the oldest release"),
    ("", "reports no status.observedKubeVirtVersion"),
])
def test_an_unknown_release_answers_as_main_and_says_why(observed: str, note: str) -> None:
    config = ClusterConfiguration()
    config.update([on_release(observed)])
    release = config.settings.release
    assert release.release == MAIN and release.source == "default"
    assert note in (release.assumed or "") and (release.assumed or "").endswith("answered as main")


def test_a_newer_release_answers_as_main_and_says_so() -> None:
    config = ClusterConfiguration()
    config.update([on_release("v1.11.0")])
    release = config.settings.release
    assert release.release == MAIN and release.reported == "v1.11.0"
    assert release.assumed == "v1.11.0 is newer than every known release: answered as main"
    assert release.source == "KubeVirt kubevirt/kubevirt status.observedKubeVirtVersion"


def test_a_distribution_suffix_is_parsed_and_said() -> None:
    config = ClusterConfiguration()
    config.update([on_release("v1.8.4-hco.1")])
    assert config.settings.release.name == "v1.8.4"
    assert config.settings.release.assumed == "suffix '-hco.1' ignored"


PANICKY = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachinePreference",
           "metadata": {"name": "panicky", "namespace": "apps"},
           "spec": {"devices": {"preferredPanicDeviceModel": "hyperv"}}}


def flat_devices(client: httpx.Client, vm: dict) -> dict:
    """The devices of the VM as /mutate stores it (the JSONPatch applied to the VM sent)."""
    import jsonpatch

    answer = client.post("/mutate", content=orjson.dumps(review(vm))).json()["response"]
    assert answer["allowed"], answer
    flat = jsonpatch.apply_patch(vm, json.loads(base64.b64decode(answer["patch"])))
    return flat["spec"]["template"]["spec"]["domain"]["devices"]


def test_the_panic_device_a_preference_creates_follows_the_release_the_cr_reports(tmp_path: Path,
                                                                                   fake: FakeAPIServer) -> None:
    """v1.8 creates no panic device from preferredPanicDeviceModel (and its virt-api refuses one without the
    PanicDevices gate): a webhook on a v1.8.4 cluster adds none; once the CR reports v1.9.0 it does."""
    fake.add(PANICKY)
    fake.add(on_release("v1.8.4"))
    vm = copy.deepcopy(VM)
    vm["spec"]["preference"] = {"name": "panicky", "kind": "VirtualMachinePreference"}
    with serve(tmp_path, "--kubeconfig", kubeconfig(tmp_path, fake), "--policy", "expand") as server, \
            server.client() as client:
        wait_for(lambda: readyz_release(client)["release"] == "v1.8.4")
        assert "panicDevices" not in flat_devices(client, vm)
        done = copy.deepcopy(fake.get("KubeVirt", "kubevirt", "kubevirt"))
        done["status"]["observedKubeVirtVersion"] = done["status"]["targetKubeVirtVersion"] = "v1.9.0"
        fake.add(done)
        wait_for(lambda: readyz_release(client)["release"] == "v1.9.0")
        assert flat_devices(client, vm)["panicDevices"] == [{"model": "hyperv"}]
