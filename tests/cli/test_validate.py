"""`instancetype-webhook validate`: files, stdin, catalogue, exit statuses."""
import argparse
import io
import json

import pytest
import yaml

from instancetype_webhook.cli import main
from instancetype_webhook.cli.validate import run as validate_run

VM = {
    "apiVersion": "kubevirt.io/v1",
    "kind": "VirtualMachine",
    "metadata": {"name": "demo", "namespace": "ns"},
    "spec": {
        "runStrategy": "Halted",
        "instancetype": {"name": "small", "kind": "VirtualMachineInstancetype"},
        "preference": {"name": "needs-4"},
        "template": {"spec": {"domain": {"devices": {}}}},
    },
}
SMALL = {
    "apiVersion": "instancetype.kubevirt.io/v1beta1",
    "kind": "VirtualMachineInstancetype",
    "metadata": {"name": "small", "namespace": "ns"},
    "spec": {"cpu": {"guest": 2}, "memory": {"guest": "2Gi"}},
}
NEEDS_4 = {
    "apiVersion": "instancetype.kubevirt.io/v1beta1",
    "kind": "VirtualMachineClusterPreference",
    "metadata": {"name": "needs-4"},
    "spec": {"requirements": {"cpu": {"guest": 4}}},
}


def write(tmp_path, name, *docs):
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(list(docs)))
    return str(path)


def test_rejected_vm_prints_causes_and_exits_1(tmp_path, capsys):
    status = main(["validate", "-f", write(tmp_path, "vm.yaml", VM), "-f",
                   write(tmp_path, "objs.yaml", SMALL, NEEDS_4)])
    out = capsys.readouterr().out
    assert status == 1
    assert out.splitlines() == [
        "VirtualMachine/ns/demo: rejected (422): failure checking preference requirements: "
        "insufficient CPU resources of 2 vCPU "
        "provided by instance type, preference requires 4 vCPU",
        "  - spec.instancetype: failure checking preference requirements: "
        "insufficient CPU resources of 2 vCPU provided by "
        "instance type, preference requires 4 vCPU [FieldValueNotFound]",
    ]


def test_allowed_vm_against_the_bundled_catalogue(tmp_path, capsys):
    vm = {**VM, "spec": {**VM["spec"], "instancetype": {"name": "u1.medium"}, "preference": {"name": "fedora"}}}
    assert main(["validate", "-f", write(tmp_path, "vm.yaml", vm)]) == 0
    assert capsys.readouterr().out == "VirtualMachine/ns/demo: allowed\n"


def test_missing_reference_is_allowed_with_a_warning(tmp_path, capsys):
    vm = {**VM, "spec": {**VM["spec"], "preference": None}}
    assert main(["validate", "-f", write(tmp_path, "vm.yaml", vm)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "VirtualMachine/ns/demo: allowed",
        '  warning: instance type not checked: virtualmachineinstancetypes.instancetype.kubevirt.io "small" not found',
    ]


def test_stdin_json_and_json_output(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(VM)))
    status = main(["validate", "-f", "-", "-f", write(tmp_path, "objs.yaml", SMALL, NEEDS_4), "-o", "json"])
    answer = json.loads(capsys.readouterr().out)
    assert status == 1
    assert answer["allowed"] is False and answer["status"]["code"] == 422 and answer["status"]["reason"] == "Invalid"
    assert [c["field"] for c in answer["status"]["details"]["causes"]] == ["spec.instancetype"]


def test_matcher_validation_runs_first(tmp_path, capsys):
    vm = {**VM, "spec": {**VM["spec"], "instancetype": {"kind": "VirtualMachineInstancetype"}}}
    assert main(["validate", "-f", write(tmp_path, "vm.yaml", vm)]) == 1
    assert "Either Name or InferFromVolume should be provided within the InstancetypeMatcher" in capsys.readouterr().out


def test_objects_are_admitted_when_there_is_no_vm(tmp_path, capsys):
    bad = {**SMALL,
           "spec": {"cpu": {"guest": 2},
                    "memory": {"guest": "2Gi", "overcommitPercent": 10, "hugepages": {"pageSize": "2Mi"}}}}
    assert main(["validate", "-f", write(tmp_path, "it.yaml", bad)]) == 1
    assert "should not be requested together" in capsys.readouterr().out
    deprecated = {**NEEDS_4, "spec": {"cpu": {"preferredCPUTopology": "preferCores"}}}
    assert main(["validate", "-f", write(tmp_path, "pref.yaml", deprecated)]) == 0
    assert "warning: PreferredCPUTopology preferCores is deprecated" in capsys.readouterr().out


def test_catalog_directory_replaces_the_bundled_one(tmp_path, capsys):
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    write(catalog, "objs.yaml", SMALL, NEEDS_4)
    assert main(["validate", "-f", write(tmp_path, "vm.yaml", VM), "--catalog", str(catalog)]) == 1
    capsys.readouterr()


@pytest.mark.parametrize(
    "content,expected",
    [
        (None, "cannot read"),
        ("a: [unclosed", "not valid YAML or JSON"),
        ("- just\n- a list\n", "expected a Kubernetes object"),
        ("kind: ConfigMap\nmetadata: {name: x}\n", "no VirtualMachine, instance type or preference"),
    ],
)
def test_unreadable_input_exits_2_with_one_line(tmp_path, capsys, content, expected):
    path = tmp_path / "in.yaml"
    if content is not None:
        path.write_text(content)
    assert main(["validate", "-f", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and expected in err


def test_bad_catalog_dir_exits_2(tmp_path, capsys):
    assert main(["validate", "-f", write(tmp_path, "vm.yaml", VM), "--catalog", str(tmp_path / "nope")]) == 2
    assert "not a directory" in capsys.readouterr().err


def test_binary_stdin_exits_2(monkeypatch, capsys):
    class Binary(io.StringIO):
        buffer = io.BytesIO(b"\xff\xfe\x00bad")

    monkeypatch.setattr("sys.stdin", Binary())
    assert main(["validate", "-f", "-"]) == 2
    assert capsys.readouterr().err.startswith("error: <stdin>: cannot read")


def test_validate_reads_the_cluster_configuration_from_a_kubevirt_object(tmp_path):
    """Without bridge on the pod network and bridge as the default, the VMI defaults fail (code 400)."""
    vm = {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "metadata": {"name": "v", "namespace": "ns"},
          "spec": {"instancetype": {"name": "u1.small"}, "template": {"spec": {"domain": {"devices": {}}}}}}
    kubevirt = {"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
                "metadata": {"name": "kubevirt", "namespace": "kubevirt"},
                "spec": {"configuration": {"network": {"permitBridgeInterfaceOnPodNetwork": False}}},
                "status": {"phase": "Deployed"}}
    path = tmp_path / "vm.yaml"
    path.write_text(yaml.safe_dump_all([vm, kubevirt]))
    args = argparse.Namespace(files=[str(path)], catalog=None, output="text")
    out = io.StringIO()
    assert validate_run(args, out, io.StringIO()) == 1
    assert "bridge interface is not enabled in kubevirt-config" in out.getvalue()
    path.write_text(yaml.safe_dump(vm))
    assert validate_run(args, io.StringIO(), io.StringIO()) == 0
