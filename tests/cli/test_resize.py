"""`instancetype-webhook resize` (and `expand --provenance`, which makes VMs it can resize)."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import yaml

from instancetype_webhook.admission.policy import PROVENANCE_KEY
from tests.kit.cli import run_main

VM = {
    "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "metadata": {"name": "web", "namespace": "apps"},
    "spec": {"runStrategy": "Halted", "instancetype": {"name": "u1.medium"}, "preference": {"name": "fedora"},
             "template": {"spec": {"domain": {"devices": {}}, "volumes": [
                 {"name": "rootdisk", "containerDisk": {"image": "quay.io/containerdisks/fedora:41"}}]}}},
}
SEVEN = {
    "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "metadata": {"name": "seven"},
    "spec": {"runStrategy": "Halted", "template": {"spec": {
        "domain": {"cpu": {"sockets": 7}, "memory": {"guest": "14Gi"}, "devices": {}},
        "volumes": [{"name": "rootdisk", "containerDisk": {"image": "quay.io/containerdisks/fedora:41"}}]}}},
}



def _flat(tmp_path: Path, vm: dict, name: str = "flat.yaml") -> Path:
    src = tmp_path / f"src-{name}"
    src.write_text(yaml.safe_dump(vm, sort_keys=False))
    code, out, err = run_main("expand", "--provenance", "-f", str(src))
    assert code == 0, err
    path = tmp_path / name
    path.write_text(out)
    return path


def _with(vm: dict, instancetype: str) -> dict:
    out = copy.deepcopy(vm)
    out["spec"]["instancetype"] = {"name": instancetype}
    return out


def test_resize_gives_what_expanding_with_the_new_size_gives(tmp_path: Path) -> None:
    flat = _flat(tmp_path, VM)
    assert PROVENANCE_KEY in yaml.safe_load(flat.read_text())["metadata"]["annotations"]
    code, out, err = run_main("resize", "-f", str(flat), "--instancetype", "u1.2xlarge", "-o", "json")
    assert code == 0 and err == ""
    expected = yaml.safe_load(_flat(tmp_path, _with(VM, "u1.2xlarge"), "big.yaml").read_text())
    assert json.loads(out) == expected


def test_diff_shows_only_the_size_and_the_provenance(tmp_path: Path) -> None:
    code, out, _ = run_main("resize", "-f", str(_flat(tmp_path, VM)), "--instancetype", "u1.2xlarge", "--diff")
    assert code == 0
    patch = json.loads(out.split("# RFC 6902 patch\n", 1)[1].split("# unified diff\n", 1)[0])
    assert {op["path"] for op in patch} == {
        f"/metadata/annotations/{PROVENANCE_KEY.replace('/', '~1')}",
        "/spec/template/spec/domain/cpu/sockets", "/spec/template/spec/domain/memory/guest"}
    assert "--- given\n+++ resized\n" in out and "+          sockets: 8\n" in out


def test_hand_written_vm_from_stdin_with_warnings(tmp_path: Path) -> None:
    code, out, err = run_main("resize", "-f", "-", "--instancetype", "cx1.2xlarge", stdin=yaml.safe_dump(SEVEN))
    assert code == 0
    assert err.splitlines() == ["warning: cx1.2xlarge replaced hand-written cpu.sockets 7 -> 8",
                                "warning: cx1.2xlarge replaced hand-written memory.guest 14Gi -> 16Gi"]
    stored = yaml.safe_load(out)
    assert stored["spec"]["template"]["spec"]["domain"]["cpu"]["dedicatedCpuPlacement"] is True
    assert "namespace" not in stored["metadata"]
    code, _, err = run_main("resize", "-f", "-", "--instancetype", "cx1.2xlarge", "--no-handwritten",
                            stdin=yaml.safe_dump(SEVEN))
    assert code == 1 and "spec.template.spec.domain.cpu.sockets conflicts with selected instance type" in err


def test_hand_edit_refused_and_bad_input(tmp_path: Path) -> None:
    flat = _flat(tmp_path, VM)
    edited = yaml.safe_load(flat.read_text())
    edited["spec"]["template"]["spec"]["domain"]["memory"]["guest"] = "6Gi"
    code, out, err = run_main("resize", "-f", "-", "--instancetype", "u1.large", stdin=yaml.safe_dump(edited))
    assert code == 1 and out == ""
    assert "memory.guest conflicts with selected instance type: 6Gi was set by hand, u1.medium had set 4Gi" in err
    assert run_main("resize", "-f", str(flat))[0] == 2
    code, _, err = run_main("resize", "-f", str(flat), "--instancetype", "u1.colossal")
    assert code == 1 and 'virtualmachineclusterinstancetypes.instancetype.kubevirt.io "u1.colossal" not found' in err
    code, _, err = run_main("resize", "-f", str(tmp_path / "missing.yaml"), "--instancetype", "u1.large")
    assert code == 2 and err.startswith("error: ")


@pytest.mark.parametrize("value, expected", [("u1.large", {"name": "u1.large"}),
                                             ("VirtualMachineInstancetype/mine",
                                              {"kind": "VirtualMachineInstancetype", "name": "mine"})])
def test_kind_and_name(value: str, expected: dict) -> None:
    from instancetype_webhook.kubevirt.resize import matcher

    assert matcher(value) == expected


def test_expand_provenance_is_what_the_webhook_stores(tmp_path: Path) -> None:
    from instancetype_webhook.admission.context import ReviewContext
    from instancetype_webhook.admission.mutate import answer_vm
    from instancetype_webhook.sources.catalog import load_catalog

    answer = answer_vm(VM, None, "CREATE", "apps", ReviewContext(source=load_catalog(None), policy="expand"))
    assert yaml.safe_load(_flat(tmp_path, VM).read_text()) == answer.flat
    assert json.dumps(yaml.safe_load(_flat(tmp_path, VM, "again.yaml").read_text())) == json.dumps(answer.flat)
