"""Server-side apply (what Argo CD and Flux write with) through the real server registered as both webhooks on
the strict fake API server (`application/apply-patch+yaml`, field managers, managedFields, conflicts, force,
dry-run: tests/fakeapi/apply.py says which subset), policy `expand`:

- a VM applied with server-side apply is stored flat;
- applying the same manifest again changes nothing in the stored spec, labels or annotations, and bumps no
  generation; it still writes a new resourceVersion (the apply's managedFields time), the cost the docs
  page describes; a manifest the webhook does not patch re-applies as a true no-op;
- a server-side dry-run apply of the manifest (`kubectl diff --server-side`, Argo CD's server-side diff)
  shows no difference from the stored VM, and stores nothing;
- another manager's field is a 409 conflict naming it, which `force` takes over.
"""
from __future__ import annotations

import copy
import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import yaml

from instancetype_webhook.admission.policy import PROVENANCE_KEY
from tests.fakeapi.apiserver import APPLY_PATCH, FakeAPIServer
from tests.fakeapi.running import add_catalog, webhook_for
from tests.kit.server import Server

VMS = "/apis/kubevirt.io/v1/namespaces/apps/virtualmachines"
MANIFEST = """\
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: web
  namespace: apps
  labels:
    app: web
  annotations:
    team: blue
spec:
  runStrategy: Halted
  instancetype:
    name: u1.medium
  preference:
    name: fedora
  template:
    spec:
      domain:
        devices: {}
      volumes:
      - name: rootdisk
        containerDisk:
          image: quay.io/containerdisks/fedora:41
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[FakeAPIServer, Server]]:
    tmp = tmp_path_factory.mktemp("ssa-e2e")
    fake = FakeAPIServer()
    add_catalog(fake, names=None)
    fake.add({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "apps"}})
    try:
        with webhook_for(fake, tmp, "--policy", "expand") as server:
            yield fake, server
    finally:
        fake.stop()


def apply(api: httpx.Client, manifest: str, name: str, manager: str = "argocd-controller",
          **params: Any) -> httpx.Response:
    return api.patch(f"{VMS}/{name}", content=manifest.encode(), headers={"Content-Type": APPLY_PATCH},
                     params={"fieldManager": manager, **params})


def manifest(name: str, **changes: Any) -> str:
    doc = yaml.safe_load(MANIFEST)
    doc["metadata"]["name"] = name
    for dotted, value in changes.items():
        node = doc
        *parents, last = dotted.split(".")
        for key in parents:
            node = node[key]
        node[last] = value
    return yaml.safe_dump(doc)


def watched(stored: dict[str, Any]) -> tuple[Any, ...]:
    """What a GitOps diff and the VM's owner look at."""
    meta = stored["metadata"]
    return stored["spec"], meta.get("labels"), meta.get("annotations"), meta["generation"]


def test_an_applied_vm_is_stored_flat(api: httpx.Client):
    resp = apply(api, manifest("flat"), "flat")
    assert resp.status_code == 201, resp.text
    stored = api.get(f"{VMS}/flat").json()
    assert "instancetype" not in stored["spec"] and "preference" not in stored["spec"]
    assert stored["spec"]["template"]["spec"]["domain"]["memory"] == {"guest": "4Gi"}
    assert json.loads(stored["metadata"]["annotations"][PROVENANCE_KEY])["instancetype"]["name"] == "u1.medium"
    assert stored["metadata"]["labels"] == {"app": "web"} and stored["metadata"]["annotations"]["team"] == "blue"
    [entry] = stored["metadata"]["managedFields"]
    assert entry["manager"] == "argocd-controller" and entry["operation"] == "Apply"
    assert entry["fieldsV1"]["f:spec"]["f:instancetype"] == {"f:name": {}}


def test_reapplying_the_same_manifest_changes_nothing_but_the_apply_time(api: httpx.Client):
    first = apply(api, manifest("again"), "again")
    assert first.status_code == 201, first.text
    before = api.get(f"{VMS}/again").json()
    time.sleep(1.1)  # managedFields times have a resolution of one second
    resp = apply(api, manifest("again"), "again")
    assert resp.status_code == 200, resp.text
    after = api.get(f"{VMS}/again").json()
    assert watched(after) == watched(before)  # no change to spec, labels, annotations; no generation bump
    # the cost: the webhook drops the fields the manifest applies, so the apply is recorded again
    assert after["metadata"]["resourceVersion"] != before["metadata"]["resourceVersion"]
    assert after["metadata"]["managedFields"][0]["time"] != before["metadata"]["managedFields"][0]["time"]


def test_a_manifest_the_webhook_does_not_patch_reapplies_as_a_no_op(api: httpx.Client):
    plain = yaml.safe_load(manifest("plain"))
    for key in ("instancetype", "preference"):
        plain["spec"].pop(key)
    plain["spec"]["template"]["spec"]["domain"]["memory"] = {"guest": "1Gi"}
    text = yaml.safe_dump(plain)
    assert apply(api, text, "plain").status_code == 201
    before = api.get(f"{VMS}/plain").json()
    time.sleep(1.1)
    assert apply(api, text, "plain").status_code == 200
    after = api.get(f"{VMS}/plain").json()
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
    assert after == before


def test_a_server_side_dry_run_of_the_manifest_shows_no_difference(cluster, api: httpx.Client):
    fake, _ = cluster
    assert apply(api, manifest("diffed"), "diffed").status_code == 201
    live = api.get(f"{VMS}/diffed").json()
    writes = fake.writes
    dry = apply(api, manifest("diffed"), "diffed", dryRun="All")  # what kubectl diff --server-side sends
    assert dry.status_code == 200, dry.text
    assert watched(dry.json()) == watched(live)
    assert fake.writes == writes and api.get(f"{VMS}/diffed").json() == live


def test_another_managers_field_is_a_conflict_that_force_takes_over(api: httpx.Client):
    assert apply(api, manifest("owned"), "owned").status_code == 201
    edited = api.patch(f"{VMS}/owned", json={"spec": {"runStrategy": "Always"}},
                       headers={"Content-Type": "application/merge-patch+json"},
                       params={"fieldManager": "kubectl-edit"})
    assert edited.status_code == 200, edited.text
    resp = apply(api, manifest("owned"), "owned")  # the manifest still says Halted
    assert resp.status_code == 409, resp.text
    body = resp.json()
    assert body["reason"] == "Conflict"
    assert body["message"] == ('Apply failed with 1 conflict: conflict with "kubectl-edit" using kubevirt.io/v1: '
                               ".spec.runStrategy")
    assert body["details"]["causes"] == [{"type": "FieldManagerConflict", "field": ".spec.runStrategy",
                                          "message": 'conflict with "kubectl-edit" using kubevirt.io/v1'}]
    forced = apply(api, manifest("owned"), "owned", force="true")
    assert forced.status_code == 200, forced.text
    stored = forced.json()
    assert stored["spec"]["runStrategy"] == "Halted"
    managers = {e["manager"]: e for e in stored["metadata"]["managedFields"]}
    assert "f:runStrategy" in managers["argocd-controller"]["fieldsV1"]["f:spec"]
    assert "kubectl-edit" not in managers  # it owned nothing else


def test_a_field_dropped_from_the_manifest_is_removed(api: httpx.Client):
    assert apply(api, manifest("shrink"), "shrink").status_code == 201
    smaller = yaml.safe_load(manifest("shrink"))
    del smaller["metadata"]["annotations"]
    resp = apply(api, yaml.safe_dump(smaller), "shrink")
    assert resp.status_code == 200, resp.text
    annotations = resp.json()["metadata"]["annotations"]
    assert "team" not in annotations and PROVENANCE_KEY in annotations  # the webhook's own stays
    assert copy.deepcopy(resp.json()["metadata"]["labels"]) == {"app": "web"}


def test_apply_needs_a_field_manager(api: httpx.Client):
    resp = api.patch(f"{VMS}/nobody", content=MANIFEST.encode(), headers={"Content-Type": APPLY_PATCH})
    assert resp.status_code == 422
    assert "fieldManager: Required value" in resp.json()["message"]
