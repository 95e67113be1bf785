"""inferFromVolume on the real server (uvicorn, real TLS) with an offline catalogue holding CDI's labelled
examples (PVC + DataSource `os-images/fedora`) and the bundled common instance types and preferences.

- `expand`: a VM whose matchers say `inferFromVolume` is stored flat; applying the JSONPatch to the VM as
  submitted gives the VM written with the names, but for the provenance annotation, which records the
  inference (volume and object).
- `reference`: nothing is patched (virt-api's own mutator infers); a failure is denied with upstream's
  400 and message, as virt-api would deny it.
- `Ignore`: a missing label removes the matcher; a missing DataSource is still denied.
"""
from __future__ import annotations

import base64
import copy
import json
import shutil

import httpx
import jsonpatch
import pytest

from instancetype_webhook.admission.policy import POLICY_KEY, PROVENANCE_KEY
from instancetype_webhook.catalog import CATALOG_DIR
from tests.kit.builders import review
from tests.kit.server import serve
from tests.kit.shared_data import SHARED
from tests.server.test_server import post

INFERRING = {
    "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
    "metadata": {"name": "fedora-1", "namespace": "default", "labels": {"app": "demo"}},
    "spec": {
        "runStrategy": "Halted",
        "instancetype": {"inferFromVolume": "rootdisk"},
        "preference": {"inferFromVolume": "rootdisk"},
        "dataVolumeTemplates": [{"metadata": {"name": "fedora-1-root"}, "spec": {
            "sourceRef": {"kind": "DataSource", "name": "fedora", "namespace": "os-images"},
            "storage": {"resources": {"requests": {"storage": "30Gi"}}}}}],
        "template": {"spec": {"domain": {"devices": {}}, "volumes": [
            {"name": "rootdisk", "dataVolume": {"name": "fedora-1-root"}},
            {"name": "cloudinit", "cloudInitNoCloud": {"userData": "#cloud-config\n"}}]}},
    },
}
IGNORE = {"inferFromVolumeFailurePolicy": "Ignore"}


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("infer")
    catalog = tmp / "catalog"
    catalog.mkdir()
    for bundle in CATALOG_DIR.glob("*.yaml"):
        shutil.copy(bundle, catalog / bundle.name)
    shutil.copy(SHARED / "cdi-crds" / "examples" / "examples.yaml", catalog / "cdi-examples.yaml")
    unlabelled = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                  "metadata": {"name": "plain", "namespace": "default"}, "spec": {"accessModes": ["ReadWriteOnce"]}}
    (catalog / "plain-pvc.json").write_text(json.dumps(unlabelled))
    with serve(tmp, "--policy", "expand", "--catalog", str(catalog), "--allow-vm-policy") as srv, srv.client() as c:
        yield c


def stored(vm: dict, resp: dict) -> dict:
    assert resp["allowed"], resp
    return jsonpatch.apply_patch(vm, json.loads(base64.b64decode(resp["patch"])), in_place=False)


def without_provenance(vm: dict) -> tuple[dict, dict]:
    vm = copy.deepcopy(vm)
    value = json.loads(vm["metadata"]["annotations"].pop(PROVENANCE_KEY))
    if not vm["metadata"]["annotations"]:
        del vm["metadata"]["annotations"]
    return vm, value


def test_inferred_vm_is_stored_flat_like_the_vm_written_with_names(client: httpx.Client):
    inferred, prov = without_provenance(stored(INFERRING, post(client, "/mutate", review(INFERRING))))
    named = copy.deepcopy(INFERRING)
    named["spec"]["instancetype"], named["spec"]["preference"] = {"name": "u1.medium"}, {"name": "fedora"}
    by_name, _ = without_provenance(stored(named, post(client, "/mutate", review(named))))
    assert inferred == by_name
    assert "instancetype" not in inferred["spec"]
    assert inferred["spec"]["template"]["spec"]["domain"]["memory"] == {"guest": "4Gi"}
    source = {"volume": "rootdisk", "kind": "DataSource", "namespace": "os-images", "name": "fedora"}
    assert prov["instancetype"]["name"] == "u1.medium" and prov["instancetype"]["inferredFrom"] == source
    assert prov["preference"]["name"] == "fedora" and prov["preference"]["inferredFrom"] == source


def test_reference_policy_patches_nothing_and_denies_as_virt_api(client: httpx.Client):
    vm = copy.deepcopy(INFERRING)
    vm["metadata"]["annotations"] = {POLICY_KEY: "reference"}
    resp = post(client, "/mutate", review(vm))
    assert resp["allowed"] and "patch" not in resp
    vm["spec"]["template"]["spec"]["volumes"][0] = {"name": "rootdisk", "persistentVolumeClaim": {"claimName": "plain"}}
    resp = post(client, "/mutate", review(vm))
    assert not resp["allowed"] and "patch" not in resp
    assert resp["status"]["code"] == 400
    assert resp["status"]["message"] == ("unable to find required instancetype.kubevirt.io/default-instancetype "
                                         "label on the volume")


def test_missing_label_under_ignore_removes_the_matcher(client: httpx.Client):
    vm = copy.deepcopy(INFERRING)
    vm["spec"]["instancetype"] = {"inferFromVolume": "plaindisk", **IGNORE}
    vm["spec"]["preference"] = {"name": "fedora"}
    vm["spec"]["template"]["spec"]["domain"]["memory"] = {"guest": "2Gi"}  # the fallback that stays
    vm["spec"]["template"]["spec"]["volumes"].append({"name": "plaindisk",
                                                      "persistentVolumeClaim": {"claimName": "plain"}})
    resp = post(client, "/mutate", review(vm))
    flat, prov = without_provenance(stored(vm, resp))
    assert "instancetype" not in flat["spec"] and "instancetype" not in prov
    assert flat["spec"]["template"]["spec"]["domain"]["memory"] == {"guest": "2Gi"}
    assert any("inferFromVolume plaindisk failed and was ignored" in w for w in resp.get("warnings", []))


def test_missing_datasource_is_denied_even_under_ignore(client: httpx.Client):
    vm = copy.deepcopy(INFERRING)
    vm["spec"]["instancetype"] = {"inferFromVolume": "rootdisk", **IGNORE}
    vm["spec"]["dataVolumeTemplates"][0]["spec"]["sourceRef"]["name"] = "centos"
    resp = post(client, "/mutate", review(vm))
    assert not resp["allowed"] and resp["status"]["code"] == 400
    assert resp["status"]["message"] == 'datasources.cdi.kubevirt.io "centos" not found'


def test_preview_infers_too(client: httpx.Client):
    resp = client.post("/preview", json=INFERRING)
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert body["allowed"] and "instancetype" not in body["vm"]["spec"]
    assert body["vm"]["spec"]["template"]["spec"]["domain"]["cpu"] == {"cores": 1, "sockets": 1, "threads": 1}
