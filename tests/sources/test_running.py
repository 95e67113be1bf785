"""A running VM read from the (fake) cluster for the live-update planner: the VM, its VMI, the newest
VM-start revision's spec, the revisions and referenced objects, the KubeVirt CR; and each way it fails."""
from __future__ import annotations

from pathlib import Path

import pytest

from instancetype_webhook.kubevirt.source import CLUSTER_INSTANCETYPE, INSTANCETYPE
from instancetype_webhook.sources.kube import VMClient
from instancetype_webhook.sources.running import (
    RunningError,
    object_path,
    read_running,
    referenced_objects,
    start_spec,
)
from tests.fakeapi.apiserver import FakeAPIServer
from tests.fakeapi.running import add_catalog, start_running
from tests.kit.fleet_cluster import vm

KUBEVIRT = {"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
            "metadata": {"name": "kubevirt", "namespace": "kubevirt"},
            "spec": {"configuration": {"vmRolloutStrategy": "Stage"}}, "status": {"phase": "Deployed"}}


def client_for(fake: FakeAPIServer, tmp_path: Path) -> VMClient:
    return VMClient.from_config(fake.kubeconfig_file(tmp_path))[0]


def revision(name: str, spec: object) -> dict:
    return {"metadata": {"name": name}, "data": {"spec": spec}}


def test_start_spec_is_the_newest_generation_of_this_vm():
    revisions = [revision("revision-start-vm-u1-2", {"g": 2}), revision("revision-start-vm-u1-10", {"g": 10}),
                 revision("revision-start-vm-u2-99", {"g": 99}), revision("revision-start-vm-u1-x", {"g": 0}),
                 revision("web-u1.small-v1beta1--0", {"g": -1})]
    assert start_spec(revisions, "u1") == {"g": 10}
    assert start_spec(revisions, "u3") is None
    assert start_spec([{"metadata": {"name": "revision-start-vm-u1-1"}, "data": '{"spec": {"raw": 1}}'}],
                      "u1") == {"raw": 1}
    assert start_spec([revision("revision-start-vm-u1-1", "not a spec")], "u1") is None


def test_object_path_by_scope():
    assert object_path(CLUSTER_INSTANCETYPE, "u1.small", "apps") == \
        "/apis/instancetype.kubevirt.io/v1beta1/virtualmachineclusterinstancetypes/u1.small"
    assert object_path(INSTANCETYPE, "mine", "apps") == \
        "/apis/instancetype.kubevirt.io/v1beta1/namespaces/apps/virtualmachineinstancetypes/mine"


def test_referenced_objects_are_read_once_and_missing_or_unknown_ones_left_out(fake, tmp_path):
    add_catalog(fake)
    client = client_for(fake, tmp_path)
    vms = [vm("a", "apps", "u1.small", "fedora"), vm("b", "apps", "u1.small", None),
           vm("c", "apps", "nope", None), vm("d", "apps", None, None),
           {"spec": {"instancetype": {"name": "x", "kind": "Unknown"}}}]
    found = referenced_objects(client, vms, "apps")
    assert sorted((o["kind"], o["metadata"]["name"]) for o in found) == [
        ("VirtualMachineClusterInstancetype", "u1.small"), ("VirtualMachineClusterPreference", "fedora")]
    assert fake.count("GET /apis/instancetype.kubevirt.io/v1beta1/virtualmachineclusterinstancetypes/u1.small") == 1


def test_read_running_gathers_what_the_planner_needs(fake, tmp_path):
    add_catalog(fake)
    fake.add(KUBEVIRT)
    fake.add(vm("web", "apps", "u1.medium", "fedora"))
    vmi = start_running(fake, "apps", "web")
    running = read_running(client_for(fake, tmp_path), "apps", "web", extra_vms=[vm("next", "apps", "u1.large")])
    assert running.vm["kind"] == "VirtualMachine" and running.vm["metadata"]["name"] == "web"
    assert running.vmi["spec"] == vmi["spec"]
    assert running.start_spec["instancetype"]["name"] == "u1.medium"
    assert running.start_spec["instancetype"]["revisionName"]
    kinds = sorted((o["kind"], o["metadata"]["name"]) for o in running.objects)
    assert ("VirtualMachineClusterInstancetype", "u1.large") in kinds  # the extra VM's reference
    assert ("VirtualMachineClusterInstancetype", "u1.medium") in kinds
    assert sum(kind == "ControllerRevision" for kind, _ in kinds) == 2  # the VM-start revision left out
    assert running.kubevirt["spec"]["configuration"] == {"vmRolloutStrategy": "Stage"}
    assert running.notes == []


def test_without_a_kubevirt_cr_the_defaults_are_noted(fake, tmp_path):
    add_catalog(fake)
    fake.add(vm("web", "apps", "u1.medium", "fedora"))
    start_running(fake, "apps", "web")
    running = read_running(client_for(fake, tmp_path), "apps", "web")
    assert running.kubevirt is None
    assert running.notes == ["no KubeVirt CR found; KubeVirt's default configuration is assumed"]
    fake.forbid("list", "kubevirts")
    running = read_running(client_for(fake, tmp_path), "apps", "web")
    assert len(running.notes) == 1 and running.notes[0].startswith("cluster configuration not read (HTTP 403")


def test_each_failure_is_one_line_for_the_user(fake, tmp_path):
    add_catalog(fake)
    client = client_for(fake, tmp_path)
    with pytest.raises(RunningError, match="VirtualMachine apps/web not found"):
        read_running(client, "apps", "web")
    fake.add(vm("web", "apps", "u1.medium", "fedora"))
    with pytest.raises(RunningError, match="is not running: it has no VirtualMachineInstance"):
        read_running(client, "apps", "web")
    start_running(fake, "apps", "web")
    uid = fake.get("virtualmachines", "web", "apps")["metadata"]["uid"]
    for rev in list(fake.all("controllerrevisions")):
        if rev["metadata"]["name"].startswith("revision-start-vm-"):
            fake.delete(rev)
    with pytest.raises(RunningError, match=f"has no VM-start ControllerRevision \\(revision-start-vm-{uid}-"):
        read_running(client, "apps", "web")
    fake.forbid("list", "controllerrevisions")
    with pytest.raises(RunningError, match="cannot list the ControllerRevisions of apps: HTTP 403"):
        read_running(client, "apps", "web")
    fake.forbid("get", "virtualmachines")
    with pytest.raises(RunningError, match="GET /apis/kubevirt.io/v1/namespaces/apps/virtualmachines/web: HTTP 403"):
        read_running(client, "apps", "web")
