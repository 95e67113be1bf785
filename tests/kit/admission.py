"""The admission decision in process (no HTTP), and the objects the admission and server tests share.

- `decide(handler, review, ctx)`: the `response` of an AdmissionReview answered by `admission.mutate.mutate`
  or `admission.validate.validate`, decoded (its uid checked against the request's); `post(ctx, path, review)`:
  the same by the server's path (`/mutate`, `/validate`), for tests written against the server.
- `patch_of(response)`: the JSONPatch of a response (`[]` without one); `stored(obj, response)`: the object
  as the API server stores it once the patch is applied.
- `catalog_context(policy, **kw)`: a ReviewContext over the bundled catalogue (`catalog=` another directory).
- `VM`: a VM `apps/web-1` on u1.medium + fedora with a cloud-init secret; `kubevirt_cr(configuration)`:
  a KubeVirt CR; `SMALL` / `SMALL_VM`: a namespaced instance type `apps/small` and a VM referencing it.
- `INFERRING`: a VM whose matchers say `inferFromVolume` (a DataVolume from the DataSource `os-images/fedora`);
  `inferring_catalog(directory)`: the bundled catalogue plus CDI's labelled examples and an unlabelled PVC.
"""
from __future__ import annotations

import base64
import copy
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonpatch
import orjson

from instancetype_webhook.admission.context import ReviewContext, ReviewReply
from instancetype_webhook.admission.policy import Policy
from instancetype_webhook.catalog import CATALOG_DIR
from instancetype_webhook.sources.catalog import load_catalog
from tests.kit.shared_data import SHARED

SECRET = "#cloud-config\npassword: hunter2-do-not-log\n"
VM: dict[str, Any] = {
    "apiVersion": "kubevirt.io/v1",
    "kind": "VirtualMachine",
    "metadata": {"name": "web-1", "namespace": "apps", "labels": {"app": "web"},
                 "annotations": {"example.com/owner": "team-a"}},
    "spec": {
        "runStrategy": "Always",
        "instancetype": {"name": "u1.medium"},
        "preference": {"name": "fedora"},
        "template": {"spec": {
            "domain": {"devices": {}},
            "volumes": [
                {"name": "rootdisk", "containerDisk": {"image": "quay.io/containerdisks/fedora:41"}},
                {"name": "cloudinit", "cloudInitNoCloud": {"userData": SECRET}},
            ],
        }},
    },
}
SMALL_VM: dict[str, Any] = {
    "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
    "metadata": {"name": "vm1", "namespace": "apps"},
    "spec": {"runStrategy": "Halted", "instancetype": {"name": "small", "kind": "VirtualMachineInstancetype"},
             "template": {"spec": {"domain": {"devices": {}}}}},
}
SMALL: dict[str, Any] = {
    "apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineInstancetype",
    "metadata": {"name": "small", "namespace": "apps"}, "spec": {"cpu": {"guest": 1}, "memory": {"guest": "1Gi"}}}

INFERRING: dict[str, Any] = {
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


def kubevirt_cr(configuration: dict[str, Any], phase: str = "Deployed") -> dict[str, Any]:
    """The KubeVirt CR `kubevirt/kubevirt` with this spec.configuration (no status with `phase=""`)."""
    return {"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
            "metadata": {"name": "kubevirt", "namespace": "kubevirt"},
            "spec": {"configuration": configuration},
            "status": {"phase": phase, "defaultArchitecture": "amd64"} if phase else {}}


def inferring_catalog(directory: Path) -> Path:
    """The bundled catalogue plus CDI's labelled examples and an unlabelled PVC `default/plain`."""
    catalog = directory / "catalog"
    catalog.mkdir()
    for bundle in CATALOG_DIR.glob("*.yaml"):
        shutil.copy(bundle, catalog / bundle.name)
    shutil.copy(SHARED / "cdi-crds" / "examples" / "examples.yaml", catalog / "cdi-examples.yaml")
    unlabelled = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                  "metadata": {"name": "plain", "namespace": "default"}, "spec": {"accessModes": ["ReadWriteOnce"]}}
    (catalog / "plain-pvc.json").write_text(json.dumps(unlabelled))
    return catalog


def catalog_context(policy: Policy = "reference", catalog: str | Path | None = None, namespace: str = "default",
                    **kw: Any) -> ReviewContext:
    """A ReviewContext over the bundled catalogue (or `catalog`), `kw` its other fields."""
    return ReviewContext(source=load_catalog(catalog, default_namespace=namespace), policy=policy, **kw)


def decide(handler: Callable[[Any, ReviewContext], ReviewReply], review: dict[str, Any],
           ctx: ReviewContext) -> dict[str, Any]:
    """The decoded `response` of `handler(review, ctx)` (mutate or validate), checked to carry the review's uid."""
    reply = handler(copy.deepcopy(review), ctx)
    out = orjson.loads(reply.body)
    assert out["kind"] == "AdmissionReview" and out["apiVersion"] == review["apiVersion"]
    response = out["response"]
    assert response["uid"] == review["request"]["uid"]
    assert reply.allowed is response["allowed"]
    return response


def post(ctx: ReviewContext, path: str, review: dict[str, Any]) -> dict[str, Any]:
    """What the server's `path` (/mutate or /validate) answers for `review`, decided in process."""
    from instancetype_webhook.admission.mutate import mutate
    from instancetype_webhook.admission.validate import validate

    handlers = {"/mutate": mutate, "/validate": validate}
    return decide(handlers[path], review, ctx)


def patch_of(response: dict[str, Any]) -> list[dict[str, Any]]:
    return json.loads(base64.b64decode(response["patch"])) if "patch" in response else []


def stored(obj: dict[str, Any], response: dict[str, Any]) -> dict[str, Any]:
    """`obj` with the response's patch applied (the response must allow it)."""
    assert response["allowed"], response
    return jsonpatch.apply_patch(obj, patch_of(response), in_place=False)


# A Windows VM whose preference's input bus differs from the auto-attached tablet (the preserve-guest tests).
WINDOWS_VM = {
    "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "metadata": {"name": "win", "namespace": "demo"},
    "spec": {"runStrategy": "Halted", "instancetype": {"name": "u1.large"}, "preference": {"name": "windows.11.virtio"},
             "template": {"spec": {"domain": {"devices": {}},
                                   "volumes": [{"name": "rootdisk", "containerDisk": {"image": "example/win:11"}}]}}},
}
WARNING = "flattening changes input default-0: bus virtio -> usb"

SEVEN = {  # written flat by hand with 7 CPUs
    "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
    "metadata": {"name": "seven", "namespace": "apps"},
    "spec": {"runStrategy": "Halted", "template": {"spec": {
        "domain": {"cpu": {"sockets": 7}, "memory": {"guest": "14Gi"},
                   "devices": {"disks": [{"name": "rootdisk", "disk": {"bus": "virtio"}}]}},
        "volumes": [{"name": "rootdisk", "containerDisk": {"image": "quay.io/containerdisks/fedora:41"}}]}}},
}

# A running VM named by reference (the live-update tests).
WEB = {
    "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
    "metadata": {"name": "web", "namespace": "apps"},
    "spec": {"runStrategy": "Always", "instancetype": {"name": "u1.medium"}, "preference": {"name": "fedora"},
             "template": {"spec": {"domain": {"devices": {}}, "volumes": [
                 {"name": "rootdisk", "containerDisk": {"image": "quay.io/containerdisks/fedora:41"}}]}}},
}
