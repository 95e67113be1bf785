"""The strict fake API server populated and wired: the bundled catalogue in it (`add_catalog`), the real
webhook registered as its admission webhooks (`webhook_for`), and a running VM in it (`start_running`), as
virt-controller leaves it: the VM's status (Running, the instance type and preference refs), the
ControllerRevisions it stored, the VM-start revision and the VMI (what
`instancetype_webhook.kubevirt.liveupdate.start_vm` derives, the same path the conformance cases check)."""
from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from instancetype_webhook.kubevirt.configuration import DEFAULT_SETTINGS, ClusterSettings
from instancetype_webhook.kubevirt.liveupdate import merge_patch, start_vm
from instancetype_webhook.sources.catalog import load_catalog
from tests.fakeapi.apiserver import FakeAPIServer
from tests.kit.server import Server, serve
from tests.kit.wait import wait_for

CATALOG_NAMES = ("u1.medium", "u1.large", "u1.small", "cx1.large", "fedora")


def add_catalog(fake: FakeAPIServer, names: tuple[str, ...] | None = CATALOG_NAMES) -> list[dict[str, Any]]:
    """Put these bundled common instance types / preferences (`names=None`: the whole bundled catalogue)
    into the cluster; returns them."""
    objects = [o for o in load_catalog().objects() if names is None or o["metadata"]["name"] in names]
    for obj in objects:
        fake.add(copy.deepcopy(obj))
    return objects


def start_running(fake: FakeAPIServer, namespace: str, name: str, settings: ClusterSettings = DEFAULT_SETTINGS,
                  vmi_patch: dict[str, Any] | None = None) -> dict[str, Any]:
    """Make the stored VM `namespace/name` a running one, as virt-controller would; returns the VMI."""
    from instancetype_webhook.kubevirt.source import InMemorySource

    vm = fake.get("virtualmachines", name, namespace)
    assert vm is not None, f"no VM {namespace}/{name}"
    objects = [o for plural in ("virtualmachineclusterinstancetypes", "virtualmachineclusterpreferences",
                                "virtualmachineinstancetypes", "virtualmachinepreferences", "controllerrevisions")
               for o in fake.objects[plural].values()]
    source = InMemorySource(objects, namespace)
    started = start_vm(vm, source, settings)
    for revision in started.source.revisions.values():
        fake.add_revision(copy.deepcopy(revision))
    uid, generation = vm["metadata"]["uid"], vm["metadata"]["generation"]
    fake.add_revision({"metadata": {"name": f"revision-start-vm-{uid}-{generation}", "namespace": namespace},
                       "data": {"spec": started.start_spec}, "revision": generation})
    stored = fake.get("virtualmachines", name, namespace)
    stored["status"] = {**started.stored_vm.get("status", {}), "printableStatus": "Running", "ready": True,
                        "created": True}
    fake.add(stored)
    vmi = merge_patch(started.vmi, vmi_patch or {})
    vmi["metadata"]["annotations"] = {"kubevirt.io/vm-generation": str(generation)}
    fake.add(vmi)
    return vmi


@contextmanager
def webhook_for(fake: FakeAPIServer, tmp: Path, *args: str) -> Iterator[Server]:
    """`serve --kubeconfig` against the fake API server, ready (its cache synced), and registered as the fake's
    mutating and validating webhooks, as a real API server calls them."""
    with serve(tmp, "--kubeconfig", fake.kubeconfig_file(tmp), *args) as server, server.client() as client:
        wait_for(lambda: client.get("/readyz").status_code == 200, 15, "/readyz", logs=server.logs)
        fake.admission(server.url + "/mutate", server.url + "/validate", ca=str(server.certs.ca))
        try:
            yield server
        finally:
            fake.admission_config = None  # the webhook is gone: the fake stops calling it
