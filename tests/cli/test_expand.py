"""`instancetype-webhook expand`: files and stdin, catalogue precedence, output formats, diff, exit codes."""
from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import jsonpatch
import pytest
import yaml

from tests.kit.cli import run_main

ROOT = Path(__file__).resolve().parents[2]

VM = {
    "apiVersion": "kubevirt.io/v1",
    "kind": "VirtualMachine",
    "metadata": {"name": "demo", "namespace": "ns"},
    "spec": {
        "runStrategy": "Always",
        "instancetype": {"name": "u1.medium"},
        "preference": {"name": "fedora"},
        "template": {"spec": {"domain": {"devices": {}}, "volumes": [
            {"name": "containerdisk", "containerDisk": {"image": "quay.io/containerdisks/fedora:latest"}}]}},
    },
}



@pytest.fixture()
def vm_file(tmp_path):
    path = tmp_path / "vm.yaml"
    path.write_text(yaml.safe_dump(VM))
    return path


def test_expands_against_the_bundled_catalogue(vm_file):
    code, out, _ = run_main("expand", "-f", str(vm_file))
    assert code == 0
    flat = yaml.safe_load(out)
    spec = flat["spec"]["template"]["spec"]
    assert "instancetype" not in flat["spec"] and "preference" not in flat["spec"]
    assert spec["domain"]["memory"]["guest"] == "4Gi"
    assert spec["domain"]["cpu"] == {"cores": 1, "sockets": 1, "threads": 1}
    assert spec["domain"]["devices"]["disks"] == [{"name": "containerdisk", "disk": {"bus": "virtio"}}]
    assert flat["spec"]["template"]["metadata"]["annotations"]["vm.kubevirt.io/os"] == "linux"


def test_json_output_from_stdin_with_objects_that_override_the_catalogue(tmp_path):
    override = {
        "apiVersion": "instancetype.kubevirt.io/v1beta1",
        "kind": "VirtualMachineClusterInstancetype",
        "metadata": {"name": "u1.medium"},
        "spec": {"cpu": {"guest": 3}, "memory": {"guest": "3Gi"}},
    }
    docs = json.dumps(VM) + "\n---\n" + yaml.safe_dump(override)
    code, out, _ = run_main("expand", "-f", "-", "-o", "json", stdin=docs)
    assert code == 0
    domain = json.loads(out)["spec"]["template"]["spec"]["domain"]
    assert domain["cpu"]["sockets"] == 3 and domain["memory"]["guest"] == "3Gi"


def test_catalog_dir_replaces_the_bundled_catalogue(vm_file, tmp_path):
    empty = tmp_path / "catalog"
    empty.mkdir()
    code, _, err = run_main("expand", "-f", str(vm_file), "--catalog", str(empty))
    assert code == 1
    assert 'virtualmachineclusterinstancetypes.instancetype.kubevirt.io "u1.medium" not found' in err


def test_diff_is_a_patch_that_turns_the_input_into_the_output(vm_file):
    code, out, _ = run_main("expand", "-f", str(vm_file), "--diff")
    assert code == 0
    patch_text = out.split("# RFC 6902 patch\n", 1)[1].split("# unified diff\n", 1)[0]
    _, flat_out, _ = run_main("expand", "-f", str(vm_file), "-o", "json")
    assert jsonpatch.apply_patch(VM, json.loads(patch_text)) == json.loads(flat_out)
    diff = out.split("# unified diff\n", 1)[1]
    assert "+++ expanded" in diff and "-  instancetype:" in diff
    assert "\033[" not in diff  # not a terminal: no colour


def test_conflict_prints_the_causes_and_exits_1(tmp_path):
    vm = json.loads(json.dumps(VM))
    vm["spec"]["template"]["spec"]["domain"]["cpu"] = {"sockets": 2}
    path = tmp_path / "vm.json"
    path.write_text(json.dumps(vm))
    code, out, err = run_main("expand", "-f", str(path))
    assert code == 1 and out == ""
    assert "spec.template.spec.domain.cpu.sockets" in err and "FieldValueInvalid" in err


@pytest.mark.parametrize("content, fragment", [
    ("{not: [valid", "not valid YAML or JSON"),
    ("kind: ConfigMap\n", "bad.yaml: it holds a ConfigMap"),
    ("- 1\n- 2\n", "expected a Kubernetes object"),
])
def test_unreadable_input_is_one_line_and_exit_2(tmp_path, content, fragment):
    path = tmp_path / "bad.yaml"
    path.write_text(content)
    code, out, err = run_main("expand", "-f", str(path))
    assert code == 2 and out == ""
    assert fragment in err and len(err.strip().splitlines()) == 1


def test_missing_file_exits_2(tmp_path):
    code, _, err = run_main("expand", "-f", str(tmp_path / "nope.yaml"))
    assert code == 2 and "cannot read" in err


def test_vm_without_references_gets_no_defaults(tmp_path):
    vm = json.loads(json.dumps(VM))
    del vm["spec"]["instancetype"], vm["spec"]["preference"]
    path = tmp_path / "vm.json"
    path.write_text(json.dumps(vm))
    code, out, _ = run_main("expand", "-f", str(path), "-o", "json")
    flat = json.loads(out)
    assert code == 0 and flat["spec"]["template"]["spec"]["volumes"] == vm["spec"]["template"]["spec"]["volumes"]
    assert flat["spec"]["template"]["spec"]["domain"] == {"devices": {}, "resources": {}}  # only Go's printing


def test_expansion_prints_as_go_does_empty_lists_and_maps_gone(tmp_path):
    """expand-vm-spec answers from Go types: `disks: []`, `labels: {}` the user wrote are not printed."""
    vm = json.loads(json.dumps(VM))
    del vm["spec"]["instancetype"], vm["spec"]["preference"]
    template = vm["spec"]["template"]["spec"]
    template["domain"]["devices"] = {"disks": [], "interfaces": [], "gpus": []}
    template["networks"] = []
    vm["spec"]["dataVolumeTemplates"] = [{"metadata": {"name": "dv", "labels": {}},
                                          "spec": {"source": {"blank": {}}, "storage": {}}}]
    path = tmp_path / "vm.json"
    path.write_text(json.dumps(vm))
    code, out, _ = run_main("expand", "-f", str(path), "-o", "json")
    flat = json.loads(out)
    assert code == 0 and flat["spec"]["template"]["spec"]["domain"] == {"devices": {}, "resources": {}}
    assert "networks" not in flat["spec"]["template"]["spec"]
    assert flat["spec"]["dataVolumeTemplates"] == [{"metadata": {"name": "dv"},
                                                     "spec": {"source": {"blank": {}}, "storage": {}}}]


def test_console_script_runs_as_a_process(vm_file):
    proc = subprocess.run([sys.executable, "-m", "instancetype_webhook", "expand", "-f", str(vm_file), "-o", "json"],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["status"] == {}


def test_diff_is_coloured_on_a_terminal():
    from instancetype_webhook.cli.expand import GREEN, RED, print_diff

    class Tty(io.StringIO):
        def isatty(self):
            return True

    out = Tty()
    print_diff({"a": 1}, {"a": 2}, out, colour=out.isatty())
    text = out.getvalue()
    assert f"{RED}-a: 1" in text and f"{GREEN}+a: 2" in text
    assert '"op": "replace"' in text


def test_reference_object_without_a_name_is_unreadable_input(tmp_path):
    path = tmp_path / "objs.yaml"
    path.write_text(yaml.safe_dump(VM) + "---\nkind: VirtualMachineClusterInstancetype\nmetadata: oops\nspec: {}\n")
    code, _, err = run_main("expand", "-f", str(path))
    assert code == 2 and "without metadata.name" in err


def test_mis_typed_reference_spec_is_a_rejection_not_a_crash(tmp_path):
    path = tmp_path / "objs.yaml"
    broken = {"kind": "VirtualMachineClusterInstancetype", "metadata": {"name": "u1.medium"}, "spec": {"cpu": "x"}}
    path.write_text(yaml.safe_dump(VM) + "---\n" + yaml.safe_dump(broken))
    code, _, err = run_main("expand", "-f", str(path))
    assert code == 1 and "rejected (badRequest)" in err


@pytest.mark.parametrize("command", ["expand", "domxml", "validate"])
def test_stdin_that_is_not_utf8_is_one_line_and_exit_2(command):
    proc = subprocess.run([sys.executable, "-m", "instancetype_webhook", command, "-f", "-"], input=b"\xff\xfe kind: x",
                          capture_output=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.decode().strip().count("\n") == 0
    assert "<stdin>" in proc.stderr.decode() and "Traceback" not in proc.stderr.decode()


KUBEVIRT = {"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
            "metadata": {"name": "kubevirt", "namespace": "kubevirt"},
            "spec": {"configuration": {"network": {"defaultNetworkInterface": "masquerade"},
                                       "architectureConfiguration": {"amd64": {"machineType": "pc-q35-rhel9.6.0"}}}},
            "status": {"phase": "Deployed", "defaultArchitecture": "amd64"}}


def test_a_kubevirt_object_among_the_documents_is_the_cluster_configuration(tmp_path):
    path = tmp_path / "in.yaml"
    path.write_text(yaml.safe_dump_all([VM, KUBEVIRT]))
    code, out, err = run_main("expand", "-f", str(path), "-o", "json")
    assert code == 0, err
    spec = json.loads(out)["spec"]["template"]["spec"]
    assert spec["domain"]["devices"]["interfaces"][0]["masquerade"] == {}
    assert spec["domain"]["machine"] == {"type": "pc-q35-rhel9.6.0"}
    bad = json.loads(json.dumps(KUBEVIRT))
    bad["spec"]["configuration"]["network"]["defaultNetworkInterface"] = "sriov"
    path.write_text(yaml.safe_dump_all([VM, bad]))
    code, _, err = run_main("expand", "-f", str(path))
    assert code == 2 and "invalid default-network-interface in config: sriov" in err
    path.write_text(yaml.safe_dump_all([VM, KUBEVIRT, KUBEVIRT]))
    assert run_main("expand", "-f", str(path))[0] == 2


def test_provenance_on_a_vm_the_webhook_refuses_prints_the_refusal_and_exits_1(tmp_path):
    # u1.nano (512Mi) with fedora (requires 2Gi): expandable, but /mutate under expandAll denies it
    vm = {**VM, "spec": {**VM["spec"], "instancetype": {"name": "u1.nano"}}}
    path = tmp_path / "vm.yaml"
    path.write_text(yaml.safe_dump(vm))
    assert run_main("expand", "-f", str(path))[0] == 0
    code, out, err = run_main("expand", "--provenance", "-f", str(path))
    assert (code, out) == (1, "")
    v_code, v_out, _ = run_main("validate", "-f", str(path))
    assert v_code == 1
    verdict, *causes = v_out.splitlines()
    assert verdict.startswith("VirtualMachine/ns/demo: rejected (422): failure checking preference requirements")
    assert causes and all(cause.startswith("  - spec.instancetype: ") for cause in causes)
    assert err.splitlines() == [f"rejected by the mutating webhook (422): {verdict.split(': ', 2)[2]}", *causes]
