"""`--strict` and the unknown-field warnings of every command that reads objects (kubectl's strict field validation)."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import yaml

from tests.kit.admission import WEB
from tests.kit.cli import run_main

VM = {
    "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "metadata": {"name": "web", "namespace": "apps"},
    "spec": {"runStrategy": "Halted", "instancetype": {"name": "u1.medium"}, "preference": {"name": "fedora"},
             "template": {"spec": {"domain": {"devices": {}}, "volumes": [
                 {"name": "rootdisk", "containerDisk": {"image": "quay.io/containerdisks/fedora:41"}}]}}},
}
GUEST = "spec.template.spec.domain.cpu.guest"
WARNING = f'Warning: unknown field "{GUEST}"'


def typo(vm=VM):
    vm = copy.deepcopy(vm)
    vm["spec"]["template"]["spec"]["domain"]["cpu"] = {"guest": 4}
    return vm


def write(tmp_path: Path, vm, name="vm.yaml") -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(vm))
    return str(path)


def test_expand_warns_with_the_path_and_carries_on(tmp_path):
    code, out, err = run_main("expand", "-f", write(tmp_path, typo()))
    clean_code, clean_out, clean_err = run_main("expand", "-f", write(tmp_path, VM, "clean.yaml"))
    assert code == clean_code == 0
    assert err.splitlines() == [WARNING] and clean_err == ""
    assert yaml.safe_load(out)["spec"]["template"]["spec"]["domain"]["cpu"]["guest"] == 4  # kept, as before


def test_strict_refuses_the_typo_with_the_path_and_exit_2(tmp_path):
    path = write(tmp_path, typo())
    code, out, err = run_main("expand", "-f", path, "--strict")
    assert code == 2 and out == ""
    assert err == (f'error: {path}: VirtualMachine in version "v1" cannot be handled as a VirtualMachine: '
                   f'strict decoding error: unknown field "{GUEST}"\n')


def test_strict_passes_a_clean_vm(tmp_path):
    code, out, err = run_main("expand", "-f", write(tmp_path, VM), "--strict")
    assert code == 0 and out and err == ""


def test_every_unknown_field_of_every_object_is_one_line(tmp_path):
    vm = typo()
    vm["spec"]["template"]["spec"]["volumes"][0]["containerDisk"]["imge"] = "x"
    vm["metadata"]["labelz"] = {"a": "b"}
    instancetype = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineInstancetype",
                    "metadata": {"name": "mine", "namespace": "apps"},
                    "spec": {"cpu": {"guest": 1}, "memory": {"guest": "1Gi", "overcommit": 5}}}
    path = tmp_path / "all.yaml"
    path.write_text(yaml.safe_dump_all([vm, instancetype]))
    code, _, err = run_main("validate", "-f", str(path))
    assert err.splitlines() == [
        'Warning: unknown field "metadata.labelz"', WARNING,
        'Warning: unknown field "spec.template.spec.volumes[0].containerDisk.imge"',
        'Warning: unknown field "spec.memory.overcommit"']
    assert code == 0


@pytest.mark.parametrize("argv", [
    ["validate"], ["domxml"], ["resize", "--instancetype", "u1.large"],
    ["plan", "--instancetype", "u1.large"],
])
def test_every_command_that_reads_objects_warns_and_refuses_under_strict(tmp_path, argv):
    vm = typo(WEB) if argv[0] == "resize" else typo()
    path = write(tmp_path, vm)
    code, _, err = run_main(argv[0], "-f", path, *argv[1:])
    assert WARNING in err.splitlines() and code in (0, 1)
    code, out, err = run_main(argv[0], "-f", path, *argv[1:], "--strict")
    assert code == 2 and out == ""
    assert f'strict decoding error: unknown field "{GUEST}"' in err


def test_plan_checks_the_edited_vm_of_new(tmp_path):
    new = copy.deepcopy(VM)
    new["spec"]["template"]["spec"]["domain"]["memory"] = {"gest": "2Gi"}
    argv = ["plan", "-f", write(tmp_path, VM), "--new", write(tmp_path, new, "new.yaml")]
    _, _, err = run_main(*argv)
    assert 'Warning: unknown field "spec.template.spec.domain.memory.gest"' in err.splitlines()
    code, _, err = run_main(*argv, "--strict")
    assert code == 2 and "new.yaml" in err


def test_a_field_only_a_newer_release_has_warns_on_the_older_one(tmp_path):
    vm = copy.deepcopy(VM)
    vm["spec"]["template"]["spec"]["serviceAccountName"] = "robot"
    path = write(tmp_path, vm)
    for release, warned in (("v1.8", True), ("v1.9", False), ("main", False)):
        code, _, err = run_main("expand", "-f", path, "--kubevirt-version", release)
        assert code == 0
        assert ('Warning: unknown field "spec.template.spec.serviceAccountName"' in err) is warned, release


def test_preserve_unknown_subtrees_and_maps_never_warn(tmp_path):
    vm = copy.deepcopy(VM)
    vm["spec"]["template"]["metadata"] = {"labels": {"a": "b"}, "anything": {"goes": 1}}
    vm["spec"]["template"]["spec"]["nodeSelector"] = {"kubernetes.io/arch": "amd64"}
    vm["spec"]["template"]["spec"]["domain"]["clock"] = {"utc": {}, "someday": True}
    code, _, err = run_main("expand", "-f", write(tmp_path, vm), "--strict")
    assert code == 0 and err == ""


def test_json_input_from_stdin_is_checked_too():
    code, _, err = run_main("validate", "-f", "-", "--strict", stdin=json.dumps(typo()))
    assert code == 2 and err.startswith('error: <stdin>: VirtualMachine in version "v1"')
