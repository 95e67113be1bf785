"""Upstream fidelity on the live path: the real server (uvicorn, TLS, policy `expand`) reads the cluster from
the strict fake API server and is registered there as both webhooks; every VM here is written through the
fake's HTTP API, admitted, and what the fake stores is compared with what upstream stores.

- ControllerRevisions are namespaced: a `revisionName` resolves in the VM's namespace only, and a deleted
  revision is not served from the cache.
- `inferFromVolumeFailurePolicy: Ignore`: when inference cannot succeed the matcher is removed.
- UPDATE of a VM that infers under Ignore and sets `domain.memory.guest` is stored.
- A VM without references runs upstream's VMI defaults: a cluster that does not permit bridge on the pod
  network refuses the default bridge interface, and an explicit bridge on the pod network.
"""
from __future__ import annotations

import copy
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import yaml

from tests.fakeapi.apiserver import FakeAPIServer
from tests.fakeapi.running import add_catalog, webhook_for
from tests.kit.builders import vm as build_vm
from tests.kit.server import Server
from tests.kit.shared_data import SHARED
from tests.kit.wait import wait_for

CDI_EXAMPLES = list(yaml.safe_load_all((SHARED / "cdi-crds" / "examples" / "examples.yaml").read_text()))
TENANTS = ("tenant-a", "tenant-b")
SMALL = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineInstancetype",
         "metadata": {"name": "small"}, "spec": {"cpu": {"guest": 1}, "memory": {"guest": "1Gi"}}}
REVISION_ONLY_IN_A = "small-rev-only-in-a"
PLAIN_PVC = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
             "metadata": {"name": "plain", "namespace": "tenant-a"},
             "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}
# A DataSource without labels whose source is another (labelled) DataSource: upstream reads only a
# DataSource's labels, pvc and snapshot, so inference cannot succeed.
CHAINED = {"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataSource",
           "metadata": {"name": "chained", "namespace": "tenant-a"},
           "spec": {"source": {"dataSource": {"name": "fedora", "namespace": "os-images"}}}}
IGNORE = {"inferFromVolume": "rootdisk", "inferFromVolumeFailurePolicy": "Ignore"}


def vms(namespace: str) -> str:
    return f"/apis/kubevirt.io/v1/namespaces/{namespace}/virtualmachines"


def revision(name: str, namespace: str, cpu: int) -> dict[str, Any]:
    data = {**copy.deepcopy(SMALL), "metadata": {"name": "small", "namespace": namespace}}
    data["spec"]["cpu"]["guest"] = cpu
    return {"apiVersion": "apps/v1", "kind": "ControllerRevision",
            "metadata": {"name": name, "namespace": namespace,
                         "labels": {"instancetype.kubevirt.io/object-name": "small"}},
            "data": data, "revision": 1}


def vm(name: str, namespace: str, spec: dict[str, Any]) -> dict[str, Any]:
    return build_vm(name, namespace, spec=spec)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[FakeAPIServer, Server]]:
    tmp = tmp_path_factory.mktemp("fidelity-e2e")
    fake = FakeAPIServer()
    add_catalog(fake, names=None)
    for obj in CDI_EXAMPLES:
        if obj.get("kind") != "DataVolume":
            fake.add(obj)
    for namespace in TENANTS:
        fake.add({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
        fake.add({**SMALL, "metadata": {"name": "small", "namespace": namespace}})
    fake.add_revision(revision(REVISION_ONLY_IN_A, "tenant-a", 7))
    fake.add(PLAIN_PVC)
    fake.add({**PLAIN_PVC, "metadata": {"name": "fedora-tenant-a", "namespace": "tenant-a",
                                        "labels": {"instancetype.kubevirt.io/default-instancetype": "u1.medium"}}})
    fake.add(CHAINED)
    try:
        with webhook_for(fake, tmp, "--policy", "expand") as server:
            yield fake, server
    finally:
        fake.stop()


def domain(stored: dict[str, Any]) -> dict[str, Any]:
    return stored["spec"]["template"]["spec"]["domain"]


# -- ControllerRevisions are namespaced --------------------------------------------------------------------


def test_revision_name_resolves_in_the_vms_own_namespace(api: httpx.Client):
    pinned = {"name": "small", "kind": "VirtualMachineInstancetype", "revisionName": REVISION_ONLY_IN_A}
    own = api.post(vms("tenant-a"), json=vm("pinned", "tenant-a", {"instancetype": pinned}))
    assert own.status_code == 201, own.text
    assert domain(own.json())["cpu"]["sockets"] == 7

    other = api.post(vms("tenant-b"), json=vm("pinned", "tenant-b", {"instancetype": pinned}))
    assert other.status_code == 400, other.text
    assert f'controllerrevisions.apps "{REVISION_ONLY_IN_A}" not found' in other.json()["message"]
    assert api.get(f"{vms('tenant-b')}/pinned").status_code == 404


def test_a_status_revision_from_another_namespace_never_shapes_the_vm(cluster, api: httpx.Client):
    fake, _ = cluster
    body = vm("status-pinned", "tenant-b", {"instancetype": {"name": "small", "kind": "VirtualMachineInstancetype"}})
    body["status"] = {"instancetypeRef": {"name": "small", "kind": "VirtualMachineInstancetype",
                                          "controllerRevisionRef": {"name": REVISION_ONLY_IN_A}}}
    resp = api.post(vms("tenant-b"), json=body)  # the mutating webhook sees the status the client sent
    assert resp.status_code == 400, resp.text
    assert f'controllerrevisions.apps "{REVISION_ONLY_IN_A}" not found' in resp.json()["message"]


def test_a_deleted_revision_is_not_served_from_the_cache(cluster, api: httpx.Client):
    fake, _ = cluster
    fake.add_revision(revision("short-lived", "tenant-a", 5))
    pinned = {"name": "small", "kind": "VirtualMachineInstancetype", "revisionName": "short-lived"}
    first = api.post(vms("tenant-a"), json=vm("short-1", "tenant-a", {"instancetype": pinned}))
    assert first.status_code == 201, first.text
    assert domain(first.json())["cpu"]["sockets"] == 5
    fake.delete(revision("short-lived", "tenant-a", 5))
    deadline = time.monotonic() + 10
    while True:  # the deletion reaches the webhook by a watch: at once on a live GET, soon after by the event
        again = api.post(vms("tenant-a"), json=vm("short-2", "tenant-a", {"instancetype": pinned}))
        if again.status_code != 201 or time.monotonic() > deadline:
            break
        api.delete(f"{vms('tenant-a')}/short-2")
        time.sleep(0.1)
    assert again.status_code == 400, again.text
    assert 'controllerrevisions.apps "short-lived" not found' in again.json()["message"]


# -- inferFromVolume under Ignore: the matcher is removed when inference cannot succeed ------------------


def inferring(name: str, volume: dict[str, Any], templates: list[dict[str, Any]] | None = None,
              preference: dict[str, Any] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"instancetype": dict(IGNORE), "template": {"spec": {
        "domain": {"devices": {}, "memory": {"guest": "2Gi"}}, "volumes": [{"name": "rootdisk", **volume}]}}}
    if templates is not None:
        spec["dataVolumeTemplates"] = templates
    if preference is not None:
        spec["preference"] = preference
    return vm(name, "tenant-a", spec)


def dv_template(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {**spec, "storage": {"resources": {"requests": {"storage": "1Gi"}}}}}


CANNOT_INFER = {
    "datasource-chain": inferring("chain", {"dataVolume": {"name": "chain-root"}},
                                  [dv_template("chain-root",
                                               {"sourceRef": {"kind": "DataSource", "name": "chained"}})]),
    "blank-template": inferring("blank", {"dataVolume": {"name": "blank-root"}},
                                [dv_template("blank-root", {"source": {"blank": {}}})]),
    "unlabelled-pvc-both-ignore": inferring("both", {"persistentVolumeClaim": {"claimName": "plain"}},
                                            preference=dict(IGNORE)),
}


@pytest.mark.parametrize("case", sorted(CANNOT_INFER))
def test_ignore_removes_the_matcher_when_inference_cannot_succeed(api: httpx.Client, case: str):
    body = CANNOT_INFER[case]
    resp = api.post(vms("tenant-a"), json=body)
    assert resp.status_code == 201, resp.text
    stored = api.get(f"{vms('tenant-a')}/{body['metadata']['name']}").json()
    assert "instancetype" not in stored["spec"] and "preference" not in stored["spec"], stored["spec"]
    assert domain(stored)["memory"] == {"guest": "2Gi"}  # kept: no instance type was inferred
    if "dataVolumeTemplates" in body["spec"]:
        assert stored["spec"]["dataVolumeTemplates"] == body["spec"]["dataVolumeTemplates"]


def test_update_of_a_vm_that_infers_under_ignore_with_guest_memory_is_stored(api: httpx.Client):
    body = inferring("upd", {"dataVolume": {"name": "upd-root"}},
                     [dv_template("upd-root", {"sourceRef": {"kind": "DataSource", "name": "fedora",
                                                             "namespace": "os-images"}})])
    created = api.post(vms("tenant-a"), json=body)
    assert created.status_code == 201, created.text
    stored = created.json()
    assert "instancetype" not in stored["spec"]
    assert domain(stored)["memory"] == {"guest": "4Gi"}  # inferred u1.medium: upstream clears memory under Ignore
    # the client applies its manifest again (inferFromVolume, Ignore, its own guest memory): upstream stores it
    update = copy.deepcopy(body)
    update["metadata"]["resourceVersion"] = stored["metadata"]["resourceVersion"]
    update["spec"]["runStrategy"] = "Always"
    resp = api.put(f"{vms('tenant-a')}/upd", json=update)
    assert resp.status_code == 200, resp.text
    after = resp.json()
    assert after["spec"]["runStrategy"] == "Always" and "instancetype" not in after["spec"]
    assert domain(after)["memory"] == {"guest": "4Gi"}


def test_update_of_a_captured_vm_that_infers_under_ignore_with_guest_memory_is_stored(cluster, api: httpx.Client):
    """The stored VM keeps its references (captured: its status names a ControllerRevision), so nothing is
    flattened; upstream's mutator infers the names and clears `domain.memory` under Ignore, and stores it."""
    fake, _ = cluster
    u1 = fake.get("VirtualMachineClusterInstancetype", "u1.medium")
    fake.add_revision({"metadata": {"name": "captured-u1", "namespace": "tenant-a",
                                    "labels": {"instancetype.kubevirt.io/object-name": "u1.medium"}},
                       "data": u1, "revision": 1})
    stored = vm("captured", "tenant-a", {"instancetype": {"name": "u1.medium"}, "template": {"spec": {
        "domain": {"devices": {}},
        "volumes": [{"name": "rootdisk", "persistentVolumeClaim": {"claimName": "fedora"}}]}}})
    stored["status"] = {"instancetypeRef": {"name": "u1.medium", "kind": "VirtualMachineClusterInstancetype",
                                            "controllerRevisionRef": {"name": "captured-u1"}}}
    current = fake.add(stored)
    update = copy.deepcopy(stored)
    update.pop("status")
    update["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
    update["spec"]["instancetype"] = dict(IGNORE)
    update["spec"]["template"]["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"] = "fedora-tenant-a"
    update["spec"]["template"]["spec"]["domain"]["memory"] = {"guest": "2Gi"}
    resp = api.put(f"{vms('tenant-a')}/captured", json=update)
    assert resp.status_code == 200, resp.text
    after = resp.json()
    assert after["spec"]["instancetype"] == {"name": "u1.medium"}  # inferred; the kind label is absent
    assert "memory" not in domain(after)  # cleared under Ignore, as upstream's mutator does
    assert after["status"] == stored["status"]


# -- a VM without references still gets upstream's VMI defaults in the validating webhook ----------------

NO_BRIDGE = {"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
             "metadata": {"name": "kubevirt", "namespace": "kubevirt"},
             "spec": {"configuration": {"network": {"permitBridgeInterfaceOnPodNetwork": False}}},
             "status": {"phase": "Deployed", "defaultArchitecture": "amd64"}}


# The server follows the KubeVirt CR through a watch: on a loaded machine that can take a while, so the wait
# has a generous deadline (it returns as soon as the configuration is in use).
CONFIGURATION_DEADLINE = 60.0


def configuration(client: httpx.Client) -> str:
    return client.get("/readyz").json().get("clusterConfiguration", "")


def wait_for_configuration(server: Server, generation: int) -> None:
    """Until the server uses generation `generation` of the KubeVirt CR kubevirt/kubevirt."""
    wanted = f"KubeVirt kubevirt/kubevirt generation {generation} "
    with server.client() as client:
        wait_for(lambda: wanted in configuration(client), CONFIGURATION_DEADLINE,
                 f"the server using KubeVirt kubevirt/kubevirt generation {generation}", logs=server.logs)


def test_a_vm_without_references_gets_the_default_bridge_refused(cluster, api: httpx.Client):
    fake, server = cluster
    generation = fake.add(NO_BRIDGE)["metadata"]["generation"]
    try:
        wait_for_configuration(server, generation)
        plain = vm("plain-bridge", "tenant-a", {})  # no interfaces: the defaults add bridge on the pod network
        resp = api.post(vms("tenant-a"), json=plain)
        assert resp.status_code == 400, resp.text
        assert resp.json()["message"].endswith("denied the request: bridge interface is not enabled in kubevirt-config")
        masquerade = vm("plain-masq", "tenant-a", {"template": {"spec": {
            "domain": {"devices": {"interfaces": [{"name": "default", "masquerade": {}}]}},
            "networks": [{"name": "default", "pod": {}}]}}})
        assert api.post(vms("tenant-a"), json=masquerade).status_code == 201
    finally:  # virt-api keeps the last configuration when the CR goes away: permit bridge again instead
        permitted = fake.get("KubeVirt", "kubevirt", "kubevirt")
        permitted["spec"]["configuration"]["network"]["permitBridgeInterfaceOnPodNetwork"] = True
        wait_for_configuration(server, fake.add(permitted)["metadata"]["generation"])


# -- a VM without matchers keeps a leftover status.instancetypeRef / preferenceRef in its expansion -------

LEFTOVER_STATUS = {
    "instancetypeRef": {"name": "small", "kind": "VirtualMachineInstancetype",
                        "controllerRevisionRef": {"name": REVISION_ONLY_IN_A}},
    "preferenceRef": {"name": "fedora", "kind": "VirtualMachineClusterPreference",
                      "controllerRevisionRef": {"name": "fedora-rev"}},
    "printableStatus": "Stopped",
}


def test_expansion_of_a_vm_without_matchers_keeps_its_status_refs(cluster):
    _, server = cluster
    body = vm("leftover", "tenant-a", {})
    body["status"] = copy.deepcopy(LEFTOVER_STATUS)
    with server.client() as client:
        resp = client.post("/preview", json=body)
    assert resp.status_code == 200, resp.text
    preview = resp.json()
    assert preview["vm"]["status"] == LEFTOVER_STATUS  # upstream's Expand returns such a VM as it is
    assert not [op for op in preview["patch"] if op["path"].startswith("/status")]


# -- a resize that changes the preference keeps a DataVolumeTemplate's storage class, as upstream ----------


def storage_preference(name: str, storage_class: str) -> dict[str, Any]:
    return {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachinePreference",
            "metadata": {"name": name, "namespace": "tenant-a"},
            "spec": {"volumes": {"preferredStorageClassName": storage_class}}}


def test_a_resize_to_another_preference_keeps_the_templates_storage_class(cluster, api: httpx.Client):
    """Upstream's VM mutator writes the preferred storage class only into a DataVolumeTemplate without one."""
    fake, _ = cluster
    fake.add(storage_preference("fast", "fast-ssd"))
    fake.add(storage_preference("cheap", "cheap-hdd"))
    body = vm("resized", "tenant-a", {
        "instancetype": {"name": "small", "kind": "VirtualMachineInstancetype"},
        "preference": {"name": "fast", "kind": "VirtualMachinePreference"},
        "dataVolumeTemplates": [dv_template("resized-root", {"source": {"blank": {}}})],
        "template": {"spec": {"domain": {"devices": {}},
                              "volumes": [{"name": "rootdisk", "dataVolume": {"name": "resized-root"}}]}}})
    created = api.post(vms("tenant-a"), json=body)
    assert created.status_code == 201, created.text
    stored = created.json()
    assert stored["spec"]["dataVolumeTemplates"][0]["spec"]["storage"]["storageClassName"] == "fast-ssd"
    resize = copy.deepcopy(stored)
    resize["spec"]["preference"] = {"name": "cheap", "kind": "VirtualMachinePreference"}
    resp = api.put(f"{vms('tenant-a')}/resized", json=resize)
    assert resp.status_code == 200, resp.text
    after = resp.json()
    assert "preference" not in after["spec"]
    assert after["spec"]["dataVolumeTemplates"][0]["spec"]["storage"]["storageClassName"] == "fast-ssd"
    # a template without a class gets the new preference's
    fresh = copy.deepcopy(after)
    fresh["spec"]["preference"] = {"name": "cheap", "kind": "VirtualMachinePreference"}
    fresh["spec"]["dataVolumeTemplates"][0]["spec"]["storage"].pop("storageClassName")
    again = api.put(f"{vms('tenant-a')}/resized", json=fresh)
    assert again.status_code == 200, again.text
    assert again.json()["spec"]["dataVolumeTemplates"][0]["spec"]["storage"]["storageClassName"] == "cheap-hdd"
