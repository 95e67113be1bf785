"""/mutate over real TLS: flattening a VM whose preference shapes an auto-attached device warns about the
change; with --preserve-guest the flat VM keeps the device (and no warning)."""
from __future__ import annotations

import base64
import json
from pathlib import Path

import jsonpatch
import orjson

from tests.kit.builders import review
from tests.kit.server import serve

WINDOWS_VM = {
    "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "metadata": {"name": "win", "namespace": "demo"},
    "spec": {"runStrategy": "Halted", "instancetype": {"name": "u1.large"}, "preference": {"name": "windows.11.virtio"},
             "template": {"spec": {"domain": {"devices": {}},
                                   "volumes": [{"name": "rootdisk", "containerDisk": {"image": "example/win:11"}}]}}},
}
WARNING = "flattening changes input default-0: bus virtio -> usb"


def _mutate(client, vm: dict) -> tuple[dict, list[str]]:
    resp = client.post("/mutate", content=orjson.dumps(review(vm)))
    assert resp.status_code == 200, resp.text
    answer = resp.json()["response"]
    assert answer["allowed"], answer
    flat = jsonpatch.apply_patch(vm, json.loads(base64.b64decode(answer["patch"])), in_place=False)
    return flat, answer.get("warnings", [])


def _inputs(flat: dict) -> list | None:
    return flat["spec"]["template"]["spec"]["domain"]["devices"].get("inputs")


def test_flattening_warns_and_preserve_guest_keeps_the_device(tmp_path: Path):
    with serve(tmp_path, "--policy", "expand") as server, server.client() as client:
        flat, warnings = _mutate(client, WINDOWS_VM)
        assert WARNING in warnings and _inputs(flat) is None  # upstream's flat VM
    with serve(tmp_path, "--policy", "expand", "--preserve-guest") as server, server.client() as client:
        flat, warnings = _mutate(client, WINDOWS_VM)
        assert WARNING not in warnings
        assert _inputs(flat) == [{"name": "default-0", "type": "tablet", "bus": "virtio"}]
        fedora = json.loads(json.dumps(WINDOWS_VM).replace("windows.11.virtio", "fedora"))
        assert _inputs(_mutate(client, fedora)[0]) is None  # nothing to keep: the flat VM is upstream's


def test_preview_reports_the_same_change(tmp_path: Path):
    with serve(tmp_path, "--policy", "expand") as server, server.client() as client:
        body = client.post("/preview", content=orjson.dumps(WINDOWS_VM)).json()
        assert WARNING in body["warnings"] and _inputs(body["vm"]) is None
        assert '<input type="tablet" bus="usb">' in body["domainXML"]  # upstream's expanded VM at start


def test_preview_under_preserve_guest_renders_the_preserved_vm(tmp_path: Path):
    with serve(tmp_path, "--policy", "expand", "--preserve-guest") as server, server.client() as client:
        body = client.post("/preview", content=orjson.dumps(WINDOWS_VM)).json()
    assert _inputs(body["vm"]) == [{"name": "default-0", "type": "tablet", "bus": "virtio"}]
    assert '<input type="tablet" bus="virtio" model="virtio">' in body["domainXML"]
    assert 'model="qemu-xhci"' not in body["domainXML"]


def test_a_null_namespace_is_removed_once_and_the_patch_applies(tmp_path: Path):
    """Found by the fuzz suite: the provenance's metadata patch and the flattening patch both removed
    `metadata.namespace: null`, so the API server could not apply the answer."""
    vm = {**WINDOWS_VM, "metadata": {"name": "win", "namespace": None}}
    with serve(tmp_path, "--policy", "expand") as server, server.client() as client:
        resp = client.post("/mutate", content=orjson.dumps(review(vm, namespace="demo")))
        answer = resp.json()["response"]
    assert answer["allowed"], answer
    flat = jsonpatch.apply_patch(vm, json.loads(base64.b64decode(answer["patch"])), in_place=False)
    assert "namespace" not in flat["metadata"]
    assert "instancetype-webhook.kubevirt.io/expanded-from" in flat["metadata"]["annotations"]
