"""`--kubevirt-version R` on the commands that answer: files and the bundled catalogue are pruned as R's API
server stores them, the answer follows R's profile, and a bad value is one clear line with exit status 2."""
from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest
import yaml

from instancetype_webhook.cli import main

ROOT = Path(__file__).resolve().parents[2]
CONFORMANCE = ROOT / "tests" / "data" / "shared" / "conformance"


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    old = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = io.StringIO(""), out, err
    try:
        code = main(argv)
    finally:
        sys.stdin, sys.stdout, sys.stderr = old
    return code, out.getvalue(), err.getvalue()


def write(tmp_path: Path, name: str, *docs: dict) -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


@pytest.fixture
def numa_vm(tmp_path: Path) -> str:
    """A VM of the dedicated-CPU, NUMA-passthrough instance type cx1.large1gi (from the bundled catalogue)."""
    case = json.loads((CONFORMANCE / "common-instancetype.cx1.large1gi.typical.json").read_text())
    return write(tmp_path, "numa.yaml", case["input"]["vm"])


VM = {
    "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "metadata": {"name": "win", "namespace": "ns"},
    "spec": {"runStrategy": "Always", "instancetype": {"name": "u1.large"},
             "preference": {"name": "windows.10.virtio"},
             "template": {"spec": {"domain": {"devices": {}}, "volumes": [
                 {"name": "containerdisk", "containerDisk": {"image": "quay.io/containerdisks/fedora:latest"}}]}}},
}


def test_domxml_numa_distances_follow_the_release(numa_vm: str) -> None:
    code, main_xml, _ = run_cli(["domxml", "-f", numa_vm, "--kubevirt-version", "main"])
    assert code == 0 and "<distances>" in main_xml
    code, release_xml, _ = run_cli(["domxml", "-f", numa_vm, "--kubevirt-version", "v1.9.0"])
    assert code == 0 and "<numa>" in release_xml and "<distances>" not in release_xml


def test_domxml_default_is_main(numa_vm: str) -> None:
    assert run_cli(["domxml", "-f", numa_vm])[1] == run_cli(["domxml", "-f", numa_vm, "--kubevirt-version", "main"])[1]


def test_expand_prints_creation_timestamp_null_on_v1_7(tmp_path: Path) -> None:
    vm = write(tmp_path, "vm.yaml", VM)
    code, old, _ = run_cli(["expand", "-f", vm, "--kubevirt-version", "v1.7.4"])
    assert code == 0 and "creationTimestamp: null" in old
    code, new, _ = run_cli(["expand", "-f", vm])
    assert code == 0 and "creationTimestamp" not in new


def test_bundled_catalogue_is_pruned_to_the_release(tmp_path: Path) -> None:
    """windows.10.virtio has preferredVideoType, a field v1.9 added: v1.8.4's API server pruned it."""
    vm = write(tmp_path, "vm.yaml", VM)
    flat_main = json.loads(run_cli(["expand", "-f", vm, "-o", "json"])[1])
    flat_v18 = json.loads(run_cli(["expand", "-f", vm, "-o", "json", "--kubevirt-version", "v1.8.4"])[1])
    assert flat_main["spec"]["template"]["spec"]["domain"]["devices"]["video"] == {"type": "virtio"}
    assert "video" not in flat_v18["spec"]["template"]["spec"]["domain"]["devices"]


def test_a_preference_given_as_a_file_is_pruned_too(tmp_path: Path) -> None:
    preference = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachinePreference",
                  "metadata": {"name": "mine", "namespace": "ns"},
                  "spec": {"devices": {"preferredVideoType": "vga", "preferredDiskBus": "sata"}}}
    vm = {**VM, "spec": {**VM["spec"], "preference": {"kind": "VirtualMachinePreference", "name": "mine"}}}
    files = ["-f", write(tmp_path, "vm.yaml", vm, preference), "-o", "json"]
    devices_main = json.loads(run_cli(["expand", *files])[1])["spec"]["template"]["spec"]["domain"]["devices"]
    devices_v18 = json.loads(run_cli(["expand", *files, "--kubevirt-version", "v1.8"])[1])[
        "spec"]["template"]["spec"]["domain"]["devices"]
    assert devices_main["video"] == {"type": "vga"}
    assert "video" not in devices_v18
    assert devices_v18["disks"][0]["disk"]["bus"] == "sata"  # what v1.8 keeps is still applied


def test_auto_reads_the_kubevirt_object_among_the_files(tmp_path: Path) -> None:
    kubevirt = {"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt", "metadata": {"name": "kubevirt",
                                                                                   "namespace": "kubevirt"},
                "spec": {}, "status": {"phase": "Deployed", "observedKubeVirtVersion": "v1.7.4",
                                       "targetKubeVirtVersion": "v1.7.4"}}
    files = ["-f", write(tmp_path, "vm.yaml", VM, kubevirt)]
    code, out, err = run_cli(["expand", *files, "--kubevirt-version", "auto"])
    assert code == 0 and "creationTimestamp: null" in out and err == ""
    assert "creationTimestamp" not in run_cli(["expand", *files])[1]  # offline default: main, not the object's


def test_an_assumed_release_is_said(tmp_path: Path) -> None:
    code, _, err = run_cli(["expand", "-f", write(tmp_path, "vm.yaml", VM), "--kubevirt-version", "v1.8.4-hco.1"])
    assert code == 0
    assert err == "note: answering as KubeVirt v1.8.4 (profile v1.8); suffix '-hco.1' ignored\n"


@pytest.mark.parametrize("command", ["expand", "validate", "domxml", "resize", "plan"])
def test_a_release_too_old_is_one_line_and_exit_2(tmp_path: Path, command: str) -> None:
    argv = [command, "-f", write(tmp_path, "vm.yaml", VM), "--kubevirt-version", "v1.5"]
    argv += {"resize": ["--instancetype", "u1.small"], "plan": ["--instancetype", "u1.small"]}.get(command, [])
    code, out, err = run_cli(argv)
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert "KubeVirt v1.5.0 is older than the oldest release" in err and "v1.7.x" in err


@pytest.mark.parametrize("argv", [["serve", "--dev"], ["playground"], ["audit", "--kubeconfig", "/nonexistent"],
                                  ["sweep", "--kubeconfig", "/nonexistent"]])
def test_the_serving_and_fleet_commands_refuse_a_bad_version(argv: list[str]) -> None:
    code, _, err = run_cli([*argv, "--kubevirt-version", "one-point-eight"])
    assert code == 2 and "Traceback" not in err
    assert len(err.splitlines()) == 1 and "--kubevirt-version" in err and "cannot parse KubeVirt version" in err


def test_help_names_the_option_on_every_answering_command() -> None:
    from instancetype_webhook.cli import build_parser

    subparsers = next(a for a in build_parser()._actions if a.dest == "command")
    for name in ("expand", "validate", "domxml", "plan", "resize", "playground", "serve", "audit", "sweep",
                 "conformance"):
        assert "--kubevirt-version" in subparsers.choices[name].format_help(), name
