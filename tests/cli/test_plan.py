"""`instancetype-webhook plan`: offline from files (with and without the VMI) and against the strict fake
API server holding a running VM (its status, revisions, VM-start revision and VMI); table, -o json and
the documented exit codes; bad input is one line and exit 2, never a traceback."""
from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

import instancetype_webhook.cli as cli
import instancetype_webhook.cli.plan as plan_cli
from instancetype_webhook.kubevirt.configuration import DEFAULT_SETTINGS
from instancetype_webhook.kubevirt.liveupdate import start_vm
from instancetype_webhook.kubevirt.source import SourceUnavailable
from instancetype_webhook.sources.catalog import load_catalog
from tests.fakeapi.apiserver import FakeAPIServer
from tests.fakeapi.running import add_catalog, start_running
from tests.kit.cli import run_main

VM = {
    "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
    "metadata": {"name": "web", "namespace": "apps"},
    "spec": {"runStrategy": "Always", "instancetype": {"name": "u1.medium"}, "preference": {"name": "fedora"},
             "template": {"spec": {"domain": {"devices": {}}, "volumes": [
                 {"name": "rootdisk", "containerDisk": {"image": "quay.io/containerdisks/fedora:41"}}]}}},
}
FLAT = {
    "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
    "metadata": {"name": "db", "namespace": "apps"},
    "spec": {"runStrategy": "Always", "template": {"spec": {
        "domain": {"devices": {}, "cpu": {"sockets": 1, "cores": 2}, "memory": {"guest": "2Gi"}},
        "volumes": [{"name": "rootdisk", "containerDisk": {"image": "quay.io/containerdisks/fedora:41"}}]}}},
}



def write(tmp: Path, name: str, *docs: dict[str, Any]) -> str:
    path = tmp / name
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def edited(vm: dict[str, Any], **domain: Any) -> dict[str, Any]:
    out = copy.deepcopy(vm)
    out["spec"]["template"]["spec"]["domain"].update(domain)
    return out


# -- offline ------------------------------------------------------------------------------------------------

def test_a_bigger_instance_type_goes_live(tmp_path: Path) -> None:
    code, out, err = run_main("plan", "-f", write(tmp_path, "vm.yaml", VM), "--instancetype", "u1.large")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "VirtualMachine apps/web"
    assert lines[1].split() == ["FIELD", "NOW", "AFTER", "OUTCOME", "WHY"]
    assert lines[2].split()[:4] == ["instancetype", "u1.medium", "u1.large", "live"]
    assert lines[3].split()[:4] == ["domain.cpu.sockets", "1", "2", "live"]
    assert lines[4].split()[:4] == ["domain.memory.guest", "4Gi", "8Gi", "live"]
    assert "VMI conditions: HotVCPUChange, HotMemoryChange" in out
    assert out.splitlines()[-1].startswith("note: no VirtualMachineInstance given")  # derived VMI


def test_json_output_has_the_plan_and_the_exit_code(tmp_path: Path) -> None:
    code, out, _ = run_main("plan", "-f", write(tmp_path, "vm.yaml", VM), "--instancetype", "u1.small", "-o", "json")
    doc = json.loads(out)
    assert code == 5 and doc["exitCode"] == 5
    assert doc["restartRequired"] == "memory updated in template spec to a value lower than what the VM started with"
    assert doc["vmiPatched"] == {} and doc["admission"] == {"allowed": True}
    assert [f["field"] for f in doc["fields"]] == ["instancetype", "domain.memory.guest"]
    assert {f["outcome"] for f in doc["fields"]} == {"restart"}


def test_a_manifest_edit_that_needs_a_restart(tmp_path: Path) -> None:
    files = ["-f", write(tmp_path, "vm.yaml", FLAT)]
    code, out, _ = run_main("plan", *files, "--new", write(tmp_path, "new.yaml", edited(FLAT, cpu={"sockets": 1,
                                                                                                   "cores": 4})))
    assert code == 5
    assert "domain.cpu.cores" in out and "a non-live-updatable field was changed in the template spec" in out


def test_a_refused_update_exits_1(tmp_path: Path) -> None:
    pinned = edited(FLAT, cpu={"sockets": 1, "cores": 2, "maxSockets": 2})
    new = edited(FLAT, cpu={"sockets": 3, "cores": 2, "maxSockets": 2})
    code, out, _ = run_main("plan", "-f", write(tmp_path, "vm.yaml", pinned), "--new", write(tmp_path, "n.yaml", new))
    assert code == 1
    assert "admission: refused (422): Number of sockets in CPU topology is greater than the maximum sockets" in out


def test_the_vmi_in_the_files_is_the_running_one(tmp_path: Path) -> None:
    started = start_vm(FLAT, load_catalog(default_namespace="apps"), DEFAULT_SETTINGS)
    vmi = copy.deepcopy(started.vmi)
    vmi["status"]["conditions"].append({"type": "HotVCPUChange", "status": "True"})  # a hotplug in progress
    files = ["-f", write(tmp_path, "vm.yaml", FLAT, vmi)]
    code, out, err = run_main("plan", *files, "--new", write(tmp_path, "n.yaml", edited(FLAT, cpu={"sockets": 2,
                                                                                                   "cores": 2})))
    assert code == 4, err
    assert "retry" in out and "another CPU hotplug is in progress" in out
    assert "derived" not in out


def test_a_restart_exits_5_and_a_source_that_cannot_answer_still_exits_3(tmp_path: Path, monkeypatch) -> None:
    """3 is every command's "the cluster did not answer in time" (cli.UNAVAILABLE): plan's restart is 5."""
    vm = write(tmp_path, "vm.yaml", VM)
    code, out, err = run_main("plan", "-f", vm, "--instancetype", "u1.small")
    assert (code, err.count("reference lookup failed")) == (5, 0) and "restart" in out

    def unavailable(*_: Any) -> None:
        raise SourceUnavailable("GET clusterinstancetypes/u1.small: timed out after 2s")

    monkeypatch.setattr("instancetype_webhook.cli.plan.plan_update", unavailable)
    code, out, err = run_main("plan", "-f", vm, "--instancetype", "u1.small")
    assert (code, out) == (3, "")
    assert err == ("plan: reference lookup failed: GET clusterinstancetypes/u1.small: timed out after 2s "
                   "(the cluster did not answer in time; try again)\n")


def test_plans_own_exit_statuses_are_none_of_the_ones_every_command_shares() -> None:
    own = {plan_cli.EXIT_LIVE, plan_cli.EXIT_REFUSED, plan_cli.EXIT_INPUT, plan_cli.EXIT_RETRY, plan_cli.EXIT_RESTART}
    assert len(own) == 5
    assert own.isdisjoint({cli.UNAVAILABLE, cli.INTERNAL, cli.INTERRUPTED})


def test_expand_policy_plans_the_flat_vm_the_webhook_stores(tmp_path: Path) -> None:
    code, out, _ = run_main("plan", "-f", write(tmp_path, "vm.yaml", VM), "--instancetype", "u1.large",
                            "--policy", "expand", "-o", "json")
    doc = json.loads(out)
    assert code == 0 and doc["vmiPatched"] == {"spec.domain.cpu.sockets": 2, "spec.domain.memory.guest": "8Gi"}
    assert "instancetype" not in [f["field"] for f in doc["fields"]]  # flat before and after


@pytest.mark.parametrize("argv, message", [
    (["plan"], "give the running VM"),
    (["plan", "-f", "VM"], "say what changes"),
    (["plan", "-f", "VM", "--instancetype", "nope"], '"nope" not found'),
    (["plan", "-f", "VM", "--instancetype", "u1.large", "--new", "VM"], "not both"),
    (["plan", "-f", "/nonexistent.yaml", "--instancetype", "u1.large"], "cannot read"),
    (["plan", "-f", "VMI_ONLY", "--instancetype", "u1.large"], "no VirtualMachine(s)"),
    (["plan", "-f", "OTHER", "--new", "VM"], "an update keeps the name and namespace"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, argv: list[str], message: str) -> None:
    no_preference = copy.deepcopy(VM)
    del no_preference["spec"]["preference"]
    paths = {"VM": write(tmp_path, "vm.yaml", no_preference),
             "VMI_ONLY": write(tmp_path, "vmi.yaml", {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
                                                      "metadata": {"name": "web"}, "spec": {}}),
             "OTHER": write(tmp_path, "other.yaml", {**FLAT, "metadata": {"name": "other", "namespace": "apps"}})}
    code, out, err = run_main(*[paths.get(a, a) for a in argv])
    assert code == 2 and out == ""
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


# -- against a cluster --------------------------------------------------------------------------------------

@pytest.fixture
def cluster(tmp_path: Path):
    fake = FakeAPIServer()
    add_catalog(fake)
    config = fake.kubeconfig_file(tmp_path)
    try:
        yield fake, config
    finally:
        fake.stop()


def test_plan_on_a_cluster_reads_the_vm_its_vmi_and_revisions(cluster, tmp_path: Path) -> None:
    fake, config = cluster
    fake.add(copy.deepcopy(VM))
    start_running(fake, "apps", "web")
    code, out, err = run_main("plan", "web", "-n", "apps", "--kubeconfig", config, "--instancetype", "u1.large",
                              "-o", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["vm"] == "apps/web" and doc["conditions"] == ["HotVCPUChange", "HotMemoryChange"]
    assert doc["vmiPatched"] == {"spec.domain.cpu.sockets": 2, "spec.domain.memory.guest": "8Gi"}
    assert fake.count("GET /apis/kubevirt.io/v1/namespaces/apps/virtualmachineinstances/web") == 1
    assert "no KubeVirt CR found" in doc["notes"][0]


def test_the_clusters_vmi_and_configuration_decide(cluster) -> None:
    fake, config = cluster
    fake.add(copy.deepcopy(FLAT))
    fake.add({"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt", "metadata": {"name": "kubevirt", "namespace": "kv"},
              "spec": {"configuration": {"vmRolloutStrategy": "Stage"}}, "status": {"phase": "Deployed"}})
    start_running(fake, "apps", "db")
    new = edited(FLAT, cpu={"sockets": 2, "cores": 2})
    path = Path(config).parent / "new.yaml"
    path.write_text(yaml.safe_dump(new))
    code, out, _ = run_main("plan", "db", "-n", "apps", "--kubeconfig", config, "--new", str(path))
    assert code == 5 and "a non-live-updatable field was changed in the template spec" in out  # Stage


@pytest.mark.parametrize("setup, message", [
    ("nothing", "VirtualMachine apps/web not found"),
    ("stopped", "is not running: it has no VirtualMachineInstance"),
    ("no-start-revision", "has no VM-start ControllerRevision"),
])
def test_what_the_cluster_lacks_is_said(cluster, setup: str, message: str) -> None:
    fake, config = cluster
    if setup != "nothing":
        fake.add(copy.deepcopy(VM))
    if setup == "no-start-revision":
        start_running(fake, "apps", "web")
        for key in [k for k in fake.objects["controllerrevisions"] if k[1].startswith("revision-start-vm-")]:
            del fake.objects["controllerrevisions"][key]
    code, out, err = run_main("plan", "web", "-n", "apps", "--kubeconfig", config, "--instancetype", "u1.large")
    assert code == 2 and out == "" and message in err and "Traceback" not in err
