"""inferFromVolume end to end: the real server (uvicorn, TLS, policy `expand`) reads the cluster from the
strict fake API server (--kubeconfig), and the fake sends VM writes to it for admission and applies the
returned JSONPatch, as a real API server does.

- A VM created with `inferFromVolume` on a DataVolumeTemplate whose sourceRef is a labelled DataSource
  (CDI's example `os-images/fedora`) is stored flat, equal to the same VM written with the names.
- A PVC without the name label: upstream's error under Reject; under Ignore the matcher is removed.
- CDI not installed: a clear error naming the missing API, at once (no hang).
"""
from __future__ import annotations

import copy
import json
import time
from collections.abc import Iterator

import httpx
import pytest
import yaml

from instancetype_webhook.admission.policy import PROVENANCE_KEY
from tests.fakeapi.apiserver import FakeAPIServer
from tests.fakeapi.running import add_catalog, webhook_for
from tests.kit.server import Server
from tests.kit.shared_data import SHARED

VMS = "/apis/kubevirt.io/v1/namespaces/default/virtualmachines"
CDI_EXAMPLES = list(yaml.safe_load_all((SHARED / "cdi-crds" / "examples" / "examples.yaml").read_text()))
PLAIN_PVC = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "plain", "namespace": "default"},
             "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}


# specific: a VM booting from a DataVolume template of a DataSource, with cloud-init, as inference reads it
def vm(name: str, instancetype: dict, preference: dict | None = None, volume: dict | None = None) -> dict:
    spec = {
        "runStrategy": "Halted", "instancetype": instancetype,
        "dataVolumeTemplates": [{"metadata": {"name": f"{name}-root"}, "spec": {
            "sourceRef": {"kind": "DataSource", "name": "fedora", "namespace": "os-images"},
            "storage": {"resources": {"requests": {"storage": "30Gi"}}}}}],
        "template": {"spec": {"domain": {"devices": {}}, "volumes": [
            volume or {"name": "rootdisk", "dataVolume": {"name": f"{name}-root"}},
            {"name": "cloudinit", "cloudInitNoCloud": {"userData": "#cloud-config\n"}}]}},
    }
    if preference is not None:
        spec["preference"] = preference
    return {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
            "metadata": {"name": name, "namespace": "default"}, "spec": spec}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[FakeAPIServer, Server]]:
    tmp = tmp_path_factory.mktemp("infer-e2e")
    fake = FakeAPIServer()
    add_catalog(fake, names=None)
    for obj in (*CDI_EXAMPLES, PLAIN_PVC):
        if obj.get("kind") != "DataVolume":
            fake.add(obj)
    try:
        with webhook_for(fake, tmp, "--policy", "expand") as server:
            yield fake, server
    finally:
        fake.stop()


def comparable(stored: dict) -> tuple[dict, dict]:
    """The stored VM without what the API server writes and without the provenance annotation."""
    out = copy.deepcopy(stored)
    for key in ("resourceVersion", "generation", "uid", "creationTimestamp", "name"):
        out["metadata"].pop(key, None)
    annotations = out["metadata"].get("annotations") or {}
    provenance = json.loads(annotations.pop(PROVENANCE_KEY))
    if not annotations:
        out["metadata"].pop("annotations", None)
    out["spec"]["dataVolumeTemplates"][0]["metadata"]["name"] = "root"
    out["spec"]["template"]["spec"]["volumes"][0]["dataVolume"]["name"] = "root"
    return out, provenance


def test_datasource_inference_is_stored_flat_like_the_named_vm(api: httpx.Client):
    resp = api.post(VMS, json=vm("inferred", {"inferFromVolume": "rootdisk"}, {"inferFromVolume": "rootdisk"}))
    assert resp.status_code == 201, resp.text
    named = api.post(VMS, json=vm("named", {"name": "u1.medium"}, {"name": "fedora"}))
    assert named.status_code == 201, named.text
    stored = api.get(f"{VMS}/inferred").json()
    inferred, provenance = comparable(stored)
    by_name, _ = comparable(named.json())
    assert inferred == by_name
    assert "instancetype" not in inferred["spec"] and "preference" not in inferred["spec"]
    assert inferred["spec"]["template"]["spec"]["domain"]["memory"] == {"guest": "4Gi"}
    source = {"volume": "rootdisk", "kind": "DataSource", "namespace": "os-images", "name": "fedora"}
    assert provenance["instancetype"]["inferredFrom"] == provenance["preference"]["inferredFrom"] == source


def test_missing_label_under_reject_is_upstreams_error(api: httpx.Client):
    plain = {"name": "rootdisk", "persistentVolumeClaim": {"claimName": "plain"}}
    resp = api.post(VMS, json=vm("no-label", {"inferFromVolume": "rootdisk", "inferFromVolumeFailurePolicy": "Reject"},
                                 volume=plain))
    assert resp.status_code == 400, resp.text
    assert resp.json()["message"].endswith(
        "denied the request: unable to find required instancetype.kubevirt.io/default-instancetype label on the volume")
    assert api.get(f"{VMS}/no-label").status_code == 404


def test_missing_label_under_ignore_removes_the_matcher(api: httpx.Client):
    plain = {"name": "rootdisk", "persistentVolumeClaim": {"claimName": "plain"}}
    body = vm("ignored", {"inferFromVolume": "rootdisk", "inferFromVolumeFailurePolicy": "Ignore"},
              {"name": "fedora"}, volume=plain)
    body["spec"]["template"]["spec"]["domain"]["memory"] = {"guest": "2Gi"}
    resp = api.post(VMS, json=body)
    assert resp.status_code == 201, resp.text
    stored = resp.json()
    assert "instancetype" not in stored["spec"] and "preference" not in stored["spec"]  # flat: fedora applied
    assert stored["spec"]["template"]["spec"]["domain"]["memory"] == {"guest": "2Gi"}
    provenance = json.loads(stored["metadata"]["annotations"][PROVENANCE_KEY])
    assert "instancetype" not in provenance and provenance["preference"]["name"] == "fedora"
    assert any("failed and was ignored" in w for w in resp.headers.get_list("warning"))


def test_cdi_not_installed_is_a_clear_error(cluster, api: httpx.Client):
    fake, _ = cluster
    fake.uninstall("cdi.kubevirt.io")
    try:
        started = time.monotonic()
        resp = api.post(VMS,
                        json=vm("no-cdi", {"inferFromVolume": "rootdisk", "inferFromVolumeFailurePolicy": "Ignore"}))
        assert time.monotonic() - started < 5
        assert resp.status_code == 400, resp.text
        assert resp.json()["message"].endswith(
            "denied the request: unable to read DataSource os-images/fedora to infer defaults: "
            "the cdi.kubevirt.io/v1beta1 API (datasources) is not installed in the cluster")
    finally:
        fake.install("cdi.kubevirt.io")
