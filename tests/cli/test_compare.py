"""`--compare-kubevirt-version R2` on expand, validate, domxml and plan: the same VM as two releases, only what
differs printed, the exit status the first release's."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.kit.cli import run_main

# windows.10.virtio sets preferredVideoType (a field v1.9 added: v1.8.4's API server prunes it) and EFI with
# secure boot (the amd64 firmware moved to /usr/share/edk2/ovmf in v1.9)
WINDOWS = {
    "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "metadata": {"name": "win", "namespace": "ns"},
    "spec": {"runStrategy": "Always", "instancetype": {"name": "u1.large"},
             "preference": {"name": "windows.10.virtio"},
             "template": {"spec": {"domain": {"devices": {}}, "volumes": [
                 {"name": "containerdisk", "containerDisk": {"image": "quay.io/containerdisks/fedora:latest"}}]}}},
}
FEDORA = {**WINDOWS, "metadata": {"name": "fedora", "namespace": "ns"},
          "spec": {**WINDOWS["spec"], "preference": {"name": "fedora"}}}
CONFLICT = {**FEDORA, "spec": {**FEDORA["spec"], "template": {"spec": {
    "domain": {"cpu": {"sockets": 3}, "devices": {}}}}}}
RELEASES = ("--kubevirt-version", "v1.8.4", "--compare-kubevirt-version", "v1.9.0")


def write(tmp_path: Path, vm: dict) -> str:
    path = tmp_path / "vm.yaml"
    path.write_text(yaml.safe_dump(vm))
    return str(path)


def test_expand_shows_the_field_one_release_prunes(tmp_path: Path) -> None:
    code, out, err = run_main("expand", "-f", write(tmp_path, WINDOWS), *RELEASES)
    assert (code, err) == (0, "")
    assert out == ("what-if: v1.8.4 -> v1.9.0: 1 difference\nfields (v1.8.4 -> v1.9.0):\n"
                   "  spec.template.spec.domain.devices.video.type: (absent) -> virtio\n")


def test_expand_json_and_stdin_read_once(tmp_path: Path) -> None:
    code, out, _ = run_main("expand", "-f", "-", *RELEASES, "-o", "json", stdin=yaml.safe_dump(WINDOWS))
    doc = json.loads(out)
    assert code == 0 and (doc["first"], doc["second"], doc["same"], doc["differences"]) == ("v1.8.4", "v1.9.0",
                                                                                          False, 1)
    assert doc["fields"] == [{"path": "spec.template.spec.domain.devices.video.type", "first": "(absent)",
                              "second": "virtio"}]


def test_domxml_shows_the_firmware_path_that_moved(tmp_path: Path) -> None:
    code, out, _ = run_main("domxml", "-f", write(tmp_path, WINDOWS), *RELEASES)
    assert code == 0 and out.startswith("what-if: v1.8.4 -> v1.9.0: 6 differences\nlines (- v1.8.4, + v1.9.0):\n")
    assert '  -    <loader readonly="yes" secure="yes" type="pflash">/usr/share/OVMF/OVMF_CODE.secboot.fd' in out
    assert '  +    <loader readonly="yes" secure="yes" type="pflash">/usr/share/edk2/ovmf/OVMF_CODE.secboot.fd' in out
    assert "<domain" not in out  # only the lines that differ


def test_plan_shows_the_row_only_one_release_has(tmp_path: Path) -> None:
    code, out, _ = run_main("plan", "-f", write(tmp_path, WINDOWS), "--preference", "fedora", *RELEASES)
    assert code == 5  # a restart, as v1.8.4 answers
    assert out.startswith("what-if: v1.8.4 -> v1.9.0: 1 difference\nfields (v1.8.4 -> v1.9.0):\n"
                          "  domain.devices.video.type: (absent) -> restart: \"virtio\" -> null")


@pytest.mark.parametrize("command, vm, code", [("expand", FEDORA, 0), ("validate", FEDORA, 0), ("domxml", FEDORA, 0),
                                               ("validate", CONFLICT, 1), ("expand", CONFLICT, 1)])
def test_no_differences_keeps_the_first_exit_status(tmp_path: Path, command: str, vm: dict, code: int) -> None:
    result = run_main(command, "-f", write(tmp_path, vm), "--kubevirt-version", "v1.9.0",
                      "--compare-kubevirt-version", "main")
    assert (result.code, result.out) == (code, "what-if: v1.9.0 -> main: no differences\n")


def test_a_release_named_otherwise_compares_and_a_refusal_keeps_exit_1(tmp_path: Path) -> None:
    vm = write(tmp_path, CONFLICT)
    code, out, _ = run_main("validate", "-f", vm, "--compare-kubevirt-version", "v1.8")
    assert code == 1 and out == "what-if: main -> v1.8.4: no differences\n"


def test_the_default_and_the_variable_are_the_first_release(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vm = write(tmp_path, WINDOWS)
    assert run_main("expand", "-f", vm, "--compare-kubevirt-version", "v1.8.4").out.startswith(
        "what-if: main -> v1.8.4: 3 differences\n")  # the video type, and v1.8.4's own bundle: sockets
    monkeypatch.setenv("INSTANCETYPE_WEBHOOK_KUBEVIRT_VERSION", "v1.8.4")
    assert run_main("expand", "-f", vm, "--compare-kubevirt-version", "v1.9.0").out.startswith(
        "what-if: v1.8.4 -> v1.9.0: 1 difference\n")


@pytest.mark.parametrize("value, reason", [("", "empty"), ("garbage", "cannot parse")])
@pytest.mark.parametrize("command", ["expand", "validate", "domxml", "plan"])
def test_a_bad_second_release_is_one_line_and_exit_2(tmp_path: Path, command: str, value: str, reason: str) -> None:
    argv = [command, "-f", write(tmp_path, WINDOWS), "--compare-kubevirt-version", value]
    argv += ["--preference", "fedora"] if command == "plan" else []
    code, out, err = run_main(*argv)
    assert (code, out) == (2, "")
    assert len(err.splitlines()) == 1 and f"--compare-kubevirt-version: {reason}" in err


def test_an_input_error_is_said_once(tmp_path: Path) -> None:
    code, out, err = run_main("expand", "-f", str(tmp_path / "missing.yaml"), "--compare-kubevirt-version", "v1.9")
    assert (code, out) == (2, "") and err.count("cannot read") == 1
