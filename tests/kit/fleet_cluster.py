"""A cluster for audit and sweep tests: the fake API server holding the bundled catalogue, a real
webhook (`serve --kubeconfig`, uvicorn, TLS) registered as its admission webhook, and VM builders."""
from __future__ import annotations

import base64
import copy
import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import jsonpatch
import orjson

from instancetype_webhook.sources.catalog import load_catalog
from tests.fakeapi.apiserver import FakeAPIServer
from tests.fakeapi.running import webhook_for
from tests.kit.builders import review
from tests.kit.server import Server

VMS = "/apis/kubevirt.io/v1/namespaces/{ns}/virtualmachines"
INSTANCETYPES = ("u1.small", "u1.medium", "u1.large", "cx1.large", "m1.large", "n1.medium")
PREFERENCES = ("fedora", "rhel.9", "windows.11", "ubuntu", "centos.stream9", None)


def catalog_fake() -> FakeAPIServer:
    fake = FakeAPIServer()
    for obj in load_catalog().objects():
        fake.add(obj)
    return fake


# specific: a fleet VM with app labels, an owner annotation and template metadata (kit.builders.vm has none)
def vm(name: str, namespace: str, instancetype: str | None = "u1.small", preference: str | None = "fedora",
       **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
        "metadata": {"name": name, "namespace": namespace, "labels": {"app": name[:40]},
                     "annotations": {"owner": "team-a"}},
        "spec": {"runStrategy": "Halted", "template": {
            "metadata": {"labels": {"kubevirt.io/vm": name}},
            "spec": {"domain": {"devices": {"disks": [{"name": "root", "disk": {"bus": "virtio"}}]}},
                     "volumes": [{"name": "root", "containerDisk": {"image": "quay.io/containerdisks/fedora:40"}}]}}},
    }
    if instancetype:
        body["spec"]["instancetype"] = {"name": instancetype}
    if preference:
        body["spec"]["preference"] = {"name": preference}
    body["spec"].update(spec)
    return body


def mixed_vm(i: int, namespaces: int) -> dict[str, Any]:
    """Mixed catalogue references over `namespaces` namespaces; every 10th VM has no matcher."""
    ns = f"ns-{i % namespaces:02d}"
    if i % 10 == 9:
        return vm(f"vm-{i:05d}", ns, None, None, template={"spec": {"domain": {"cpu": {"cores": 1},
                                                                                "memory": {"guest": "1Gi"}}}})
    return vm(f"vm-{i:05d}", ns, INSTANCETYPES[i % len(INSTANCETYPES)], PREFERENCES[(i // 3) % len(PREFERENCES)])


def create_all(fake: FakeAPIServer, vms: list[dict[str, Any]], workers: int = 8) -> list[dict[str, Any]]:
    """POST every VM through the API (and so through the admission webhook, when one is set); the VMs
    the webhook denied are returned."""
    with httpx.Client(base_url=fake.url, timeout=30,
                      limits=httpx.Limits(max_connections=workers, max_keepalive_connections=workers)) as http:
        def post(body: dict[str, Any]) -> dict[str, Any] | None:
            resp = http.post(VMS.format(ns=body["metadata"]["namespace"]), content=orjson.dumps(body),
                             headers={"Content-Type": "application/json"})
            if resp.status_code in (400, 422) and "denied the request" in resp.json()["message"]:
                return body
            assert resp.status_code == 201, resp.text
            return None

        with ThreadPoolExecutor(workers) as pool:
            return [body for body in pool.map(post, vms) if body is not None]


@contextmanager
def webhook(tmp: Path, fake: FakeAPIServer, policy: str, *args: str) -> Iterator[Server]:
    """The real webhook on the fake cluster under `policy`, registered as the fake's mutating and validating
    webhook (tests.fakeapi.running.webhook_for)."""
    with webhook_for(fake, tmp, "--policy", policy, "--metrics-port", "0", *args) as server:
        yield server


def mutate_result(client: httpx.Client, stored: dict[str, Any]) -> dict[str, Any] | None:
    """What /mutate makes of a write of the stored VM that changes nothing (None when denied)."""
    resp = client.post("/mutate", content=orjson.dumps(review(stored, "UPDATE", old=stored)))
    answer = resp.json()["response"]
    if not answer["allowed"]:
        return None
    if "patch" not in answer:
        return copy.deepcopy(stored)
    return jsonpatch.apply_patch(stored, json.loads(base64.b64decode(answer["patch"])), in_place=False)


def comparable(obj: dict[str, Any]) -> dict[str, Any]:
    """A VM without what the API server owns (resourceVersion, generation) and without status."""
    meta = {k: v for k, v in obj["metadata"].items() if k not in ("resourceVersion", "generation")}
    return {**{k: v for k, v in obj.items() if k != "status"}, "metadata": meta}
