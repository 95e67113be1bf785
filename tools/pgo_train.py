"""The training run of the compiled build's profile-guided optimisation (tools/pgo_build.py): the review path's
everyday work, for the C compiler to lay the hot code out from.

    python tools/pgo_train.py [--rounds N]

Drives the server's own ASGI app (`create_app`, in process, no sockets) with AdmissionReviews made up here from
the bundled catalogue: every cluster instance type with the preferences in turn, on VMs of the shapes clusters
run (a container disk with cloud-init, DataVolumeTemplates, several disks and networks, guest memory set by
hand: a conflict), and a few more (a missing reference, matchers inferred from a volume that cannot answer,
under Ignore and Reject, a preference alone, no reference at all), as CREATE and UPDATE reviews to
/mutate (policy expand) and /validate, and a few bodies the server must refuse. Prints how many reviews it sent
and what they were answered. Run by an instrumented build, it writes the profile the next build reads; run by
any build, it is a smoke test of the review path. Needs nothing beside the installed package.
"""
from __future__ import annotations

import argparse
import asyncio
import collections
import copy
import itertools
import os
import sys
from typing import Any

import orjson

from instancetype_webhook.admission.context import ReviewContext
from instancetype_webhook.server.app import Webhook, create_app
from instancetype_webhook.server.logconfig import configure
from instancetype_webhook.server.metrics import Metrics
from instancetype_webhook.sources.catalog import load_catalog

CLUSTER_INSTANCETYPE = "VirtualMachineClusterInstancetype"
CLUSTER_PREFERENCE = "VirtualMachineClusterPreference"

CLOUD_INIT = "#cloud-config\nuser: fedora\nssh_pwauth: false\npackages:\n  - qemu-guest-agent\n"


def _container_disk_vm() -> dict[str, Any]:
    return {"runStrategy": "Always", "template": {
        "metadata": {"labels": {"kubevirt.io/domain": "vm"}},
        "spec": {"domain": {"devices": {"disks": [{"name": "rootdisk"}, {"name": "cloudinitdisk"}],
                                        "interfaces": [{"name": "default", "masquerade": {}}]}},
                 "networks": [{"name": "default", "pod": {}}],
                 "volumes": [{"name": "rootdisk", "containerDisk": {"image": "quay.io/containerdisks/fedora:41"}},
                             {"name": "cloudinitdisk", "cloudInitNoCloud": {"userData": CLOUD_INIT}}]}}}


def _data_volume_vm() -> dict[str, Any]:
    return {"runStrategy": "RerunOnFailure",
            "dataVolumeTemplates": [{"metadata": {"name": "root"}, "spec": {
                "sourceRef": {"kind": "DataSource", "name": "fedora", "namespace": "images"},
                "storage": {"resources": {"requests": {"storage": "30Gi"}}}}}],
            "template": {"spec": {
                "domain": {"devices": {"disks": [{"name": "root"}, {"name": "data", "disk": {"bus": "scsi"}}],
                                       "interfaces": [{"name": "default", "masquerade": {}},
                                                      {"name": "storage", "bridge": {}}]}},
                "networks": [{"name": "default", "pod": {}},
                             {"name": "storage", "multus": {"networkName": "storage-net"}}],
                "volumes": [{"name": "root", "dataVolume": {"name": "root"}},
                            {"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]}}}


def _memory_by_hand_vm() -> dict[str, Any]:
    vm = _container_disk_vm()
    vm["template"]["spec"]["domain"]["memory"] = {"guest": "3Gi"}  # a conflict when the instance type sets memory
    return vm


def _inferring(policy: str) -> dict[str, Any]:
    """A matcher inferred from the root volume (a DataVolume the catalogue cannot answer for: the policy decides)."""
    return {"inferFromVolume": "root", "inferFromVolumeFailurePolicy": policy}


def _vm(name: str, spec: dict[str, Any], instancetype: str | dict[str, Any] | None,
        preference: str | dict[str, Any] | None) -> dict[str, Any]:
    spec = copy.deepcopy(spec)
    if instancetype is not None:
        spec["instancetype"] = instancetype if isinstance(instancetype, dict) else \
            {"name": instancetype, "kind": CLUSTER_INSTANCETYPE}
    if preference is not None:
        spec["preference"] = preference if isinstance(preference, dict) else {"name": preference}
    return {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
            "metadata": {"name": name, "namespace": "team-a", "labels": {"app": name}}, "spec": spec}


def _review(uid: int, vm: dict[str, Any], operation: str = "CREATE", old: dict[str, Any] | None = None) -> bytes:
    request: dict[str, Any] = {
        "uid": f"00000000-0000-4000-8000-{uid:012d}", "operation": operation,
        "kind": {"group": "kubevirt.io", "version": "v1", "kind": "VirtualMachine"},
        "resource": {"group": "kubevirt.io", "version": "v1", "resource": "virtualmachines"},
        "namespace": "team-a", "name": vm["metadata"]["name"], "userInfo": {"username": "trainer"},
        "object": vm}
    if old is not None:
        request["oldObject"] = old
    return orjson.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request})


def reviews(catalog: Any) -> list[bytes]:
    """The training set: made up from the catalogue `catalog` holds (see the module docstring)."""
    kinds = collections.defaultdict(list)
    for obj in catalog.objects():
        kinds[obj.get("kind")].append(obj["metadata"]["name"])
    instancetypes = sorted(kinds[CLUSTER_INSTANCETYPE])
    preferences = sorted(kinds[CLUSTER_PREFERENCE])
    if not instancetypes or not preferences:
        raise SystemExit("pgo_train: the catalogue has no cluster instance types or preferences")
    shapes = (_container_disk_vm, _data_volume_vm, _memory_by_hand_vm)
    out: list[bytes] = []
    uid = itertools.count()
    for i, instancetype in enumerate(instancetypes):
        preference = preferences[i % len(preferences)]
        for shape in shapes:
            vm = _vm(f"vm-{i}", shape(), instancetype, preference)
            out.append(_review(next(uid), vm))
            relabelled = copy.deepcopy(vm)
            relabelled["metadata"]["labels"]["tier"] = "web"
            out.append(_review(next(uid), relabelled, "UPDATE", vm))
    out.append(_review(next(uid), _vm("no-refs", _container_disk_vm(), None, None)))
    out.append(_review(next(uid), _vm("missing", _container_disk_vm(), "no-such-size", preferences[0])))
    out.append(_review(next(uid), _vm("pref-only", _data_volume_vm(), None, preferences[-1])))
    out.append(_review(next(uid), _vm("inferred", _data_volume_vm(), _inferring("Ignore"), _inferring("Ignore"))))
    out.append(_review(next(uid), _vm("not-inferred", _data_volume_vm(), _inferring("Reject"), preferences[0])))
    out.append(b'{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {}}')
    out.append(b"not json")
    return out


async def _send_all(app: Any, bodies: list[bytes], rounds: int) -> collections.Counter[str]:
    answered: collections.Counter[str] = collections.Counter()

    async def one(path: str, body: bytes) -> None:
        message = {"type": "http.request", "body": body, "more_body": False}
        scope = {"type": "http", "method": "POST", "path": path, "headers": [(b"content-type", b"application/json")]}
        said: list[str] = []

        async def receive() -> dict[str, Any]:
            return message

        async def send(event: dict[str, Any]) -> None:
            if event["type"] == "http.response.start":
                said.append(str(event["status"]))
            elif event["type"] == "http.response.body":
                response = orjson.loads(event["body"]).get("response") or {}
                said.append("patched" if response.get("patch") else "allowed" if response.get("allowed") else
                            "denied" if "allowed" in response else "rejected")

        await app(scope, receive, send)
        answered[f"{path} {' '.join(said)}"] += 1

    for _ in range(rounds):
        for body in bodies:
            await one("/mutate", body)
            await one("/validate", body)
    return answered


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20, help="times the whole set is sent (default 20)")
    args = parser.parse_args(argv)
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - the review log, as the server writes it, thrown away
    configure("info", 1)
    catalog = load_catalog()
    app = create_app(Webhook(ctx=ReviewContext(source=catalog, policy="expand"), metrics=Metrics()))
    bodies = reviews(catalog)
    answered = asyncio.run(_send_all(app, bodies, args.rounds))
    sys.stdout = sys.__stdout__
    print(f"pgo_train: {sum(answered.values())} reviews: "
          + ", ".join(f"{key}: {count}" for key, count in sorted(answered.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
