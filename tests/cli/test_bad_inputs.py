"""Every command against a catalogue of bad inputs, as a user's shell runs it (a subprocess): one clear line on
stderr, the documented exit status (docs/reference/exit-codes.md), never a traceback.

The inputs: a missing file, a directory where a file is expected (and a file where a directory is), a binary
file, an empty file, the wrong kind, a wrong apiVersion, a List of mixed kinds, a 50 MiB file, a YAML bomb
(billion laughs), a busy port (serve, playground, /metrics), an unwritable --out (certs; as root here, chmod stops
nothing: a path through a regular file), and bad INSTANCETYPE_WEBHOOK_* environment variables.
"""
from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.kit.cli import run_cli

VM = ("apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: %s}\n"
      "spec: {template: {spec: {domain: {devices: {}}}}}\n")


def billion_laughs() -> str:
    """Nine levels of nine aliases: 387 million strings once expanded, 1 KiB as written."""
    lines = ['l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"l{n}: &l{n} [{', '.join([f'*l{n - 1}'] * 9)}]" for n in range(1, 9)]
    return (VM % "bomb") + "bomb:\n" + "".join(f"  {line}\n" for line in lines) + "laughs: *l8\n"


def fifty_mib() -> str:
    annotations = "".join(f'    k{i}: "{"x" * 200}"\n' for i in range(50 * 1024 * 1024 // 210))
    return f"apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: big\n  annotations:\n{annotations}"


# name -> (how to make it under a directory, the words the one line must hold)
INPUTS: dict[str, tuple[Callable[[Path], Path], str]] = {
    "missing file": (lambda d: d / "missing.yaml", "No such file or directory"),
    "directory without objects": (lambda d: (d / "empty-dir").mkdir() or d / "empty-dir", "empty-dir"),
    "binary file": (lambda d: _write(d / "binary.yaml", bytes(range(256)) * 8), "binary.yaml"),
    "empty file": (lambda d: _write(d / "empty.yaml", b""), "no Kubernetes object"),
    "wrong kind": (lambda d: _write(d / "cm.yaml", b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"),
                   "cm.yaml"),
    "wrong apiVersion": (lambda d: _write(d / "v9.yaml", (VM % "x").replace("kubevirt.io/v1", "kubevirt.io/v9")
                                          .encode()), "kubevirt.io/v9"),
    "YAML bomb": (lambda d: _write(d / "bomb.yaml", billion_laughs().encode()), "aliases"),
}
MIXED_LIST = ("apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n"
              "- {apiVersion: kubevirt.io/v1, kind: VirtualMachine, metadata: {name: v}}\n"
              "- {apiVersion: kubevirt.io/v1, kind: VirtualMachine, metadata: {name: w}}\n")


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


# The commands reading -f files, with what each needs beside them
FILE_COMMANDS = {
    "expand": [],
    "validate": [],
    "domxml": [],
    "resize": ["--instancetype", "u1.large"],
    "plan": ["--instancetype", "u1.large"],
}


def assert_one_clear_line(result, code: int, words: str = "") -> None:
    assert "Traceback" not in result.err, result.err
    lines = result.err.strip().splitlines()
    assert len(lines) == 1, result.err
    assert words in lines[0], lines[0]
    assert result.code == code, result


@pytest.mark.parametrize("command", FILE_COMMANDS)
@pytest.mark.parametrize("bad", INPUTS)
def test_a_bad_file_is_one_line_and_exit_2(tmp_path, command, bad):
    make, words = INPUTS[bad]
    result = run_cli(command, "-f", str(make(tmp_path)), *FILE_COMMANDS[command])
    if bad == "wrong kind" and command == "validate":
        words = "no VirtualMachine"
    assert_one_clear_line(result, 2, words)


@pytest.mark.parametrize("command", ["expand", "domxml", "resize"])
def test_a_list_of_mixed_kinds_with_two_vms_is_one_line_and_exit_2(tmp_path, command):
    path = _write(tmp_path / "list.yaml", MIXED_LIST.encode())
    assert_one_clear_line(run_cli(command, "-f", str(path), *FILE_COMMANDS[command]), 2, "2 documents")


def test_a_50_mib_file_is_read_and_answered_without_a_traceback(tmp_path):
    path = _write(tmp_path / "big.yaml", fifty_mib().encode())
    result = run_cli("validate", "-f", str(path), "-o", "json")
    assert "Traceback" not in result.err
    assert result.code in (0, 1)  # read and judged: a verdict, not an input error
    assert "VirtualMachine/big" in result.out


@pytest.mark.parametrize("bad", ["missing file", "binary file", "YAML bomb", "wrong apiVersion"])
def test_playground_with_a_bad_file_is_one_line_and_exit_2(tmp_path, bad):
    make, words = INPUTS[bad]
    assert_one_clear_line(run_cli("playground", "-f", str(make(tmp_path)), "--port", "0"), 2, words)


@pytest.mark.parametrize(("args", "words"), [
    (["--old", "{empty}"], "a directory without .yaml, .yml or .json files"),  # a directory is read as -f reads it
    (["--catalog", "{file}"], "not a directory"),
])
def test_a_directory_where_a_file_is_expected_and_the_reverse(tmp_path, args, words):
    vm = _write(tmp_path / "vm.yaml", (VM % "x").encode())
    (tmp_path / "empty").mkdir()
    given = [a.format(empty=tmp_path / "empty", file=vm) for a in args]
    assert_one_clear_line(run_cli("expand", "-f", str(vm), *given), 2, words)


@pytest.fixture
def busy_port():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        yield taken.getsockname()[1]


@pytest.mark.parametrize("args", [
    ["serve", "--dev", "--host", "127.0.0.1", "--port", "{port}", "--metrics-port", "0"],
    ["serve", "--dev", "--host", "127.0.0.1", "--port", "0", "--metrics-port", "{port}"],
    ["serve", "--dev", "--host", "127.0.0.1", "--port", "0", "--metrics-port", "{port}", "--workers", "2"],
    ["playground", "--port", "{port}"],
], ids=["serve", "serve-metrics", "serve-workers-metrics", "playground"])
def test_a_busy_port_is_one_line_and_exit_2_before_anything_says_serving(busy_port, args):
    result = run_cli(*(a.format(port=busy_port) for a in args))
    assert_one_clear_line(result, 2, f"127.0.0.1:{busy_port}: address already in use")
    assert "serving" not in result.out + result.err and "playground: https" not in result.out


def test_a_host_this_machine_does_not_have_is_one_line_and_exit_2():
    result = run_cli("serve", "--dev", "--host", "203.0.113.7", "--port", "0", "--metrics-port", "0")
    assert_one_clear_line(result, 2, "cannot listen on 203.0.113.7:0")


@pytest.mark.parametrize(("command", "env", "words"), [
    (["serve", "--dev"], {"INSTANCETYPE_WEBHOOK_PORT": "abc"}, "INSTANCETYPE_WEBHOOK_PORT='abc'"),
    (["serve", "--dev"], {"INSTANCETYPE_WEBHOOK_WORKERS": "0"}, "INSTANCETYPE_WEBHOOK_WORKERS='0'"),
    (["serve", "--dev", "--port", "99999"], {}, "--port"),
    (["playground"], {"INSTANCETYPE_WEBHOOK_POLICY": "nope"}, "INSTANCETYPE_WEBHOOK_POLICY='nope'"),
])
def test_a_bad_setting_names_the_flag_or_the_variable_in_one_line(command, env, words):
    assert_one_clear_line(run_cli(*command, env=env), 2, words)


def test_serve_with_a_directory_as_the_certificate_is_one_line(tmp_path):
    result = run_cli("serve", "--tls-cert", str(tmp_path), "--tls-key", str(tmp_path), "--port", "0",
                     "--metrics-port", "0")
    assert_one_clear_line(result, 2, str(tmp_path))


@pytest.mark.parametrize("out", ["{file}", "{file}/sub"], ids=["a file", "under a file"])
def test_certs_into_an_unwritable_out_is_one_line_and_exit_2(tmp_path, out):
    blocker = _write(tmp_path / "blocker", b"")
    result = run_cli("certs", "--service", "w", "--namespace", "n", "--out", out.format(file=blocker))
    assert_one_clear_line(result, 2, str(blocker))
    assert result.out == ""


@pytest.mark.parametrize("command", ["audit", "sweep"])
@pytest.mark.parametrize("bad", ["missing file", "binary file", "empty file"])
def test_the_fleet_commands_with_a_bad_kubeconfig_are_one_line_and_exit_2(tmp_path, command, bad):
    make, _ = INPUTS[bad]
    assert_one_clear_line(run_cli(command, "--kubeconfig", str(make(tmp_path))), 2)


@pytest.mark.parametrize("bad", ["missing file", "directory without objects", "binary file"])
def test_conformance_with_a_bad_directory_is_one_line_and_exit_2(tmp_path, bad):
    make, _ = INPUTS[bad]
    assert_one_clear_line(run_cli("conformance", str(make(tmp_path))), 2)
