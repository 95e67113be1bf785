"""`instancetype-webhook domxml`: expand, build the VMI, print the XML; clear errors and exit codes."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from instancetype_webhook.domxml import xml_equal
from tests.kit.cli import Result, run_main
from tests.kit.shared_data import CONFORMANCE

ROOT = Path(__file__).resolve().parents[2]

VM = """
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: fedora, namespace: demo}
spec:
  instancetype: {name: u1.medium}
  preference: {name: rhel.9.desktop}
  template:
    spec:
      domain: {devices: {}}
      volumes:
      - name: rootdisk
        containerDisk: {image: quay.io/containerdisks/fedora:41}
"""


def run_cli(tmp_path: Path, text: str, *extra: str) -> Result:
    # specific: `domxml -f` reads a file, so the text is written to one first
    path = tmp_path / "in.yaml"
    path.write_text(text)
    return run_main("domxml", "-f", str(path), *extra)


def test_vm_with_catalogue_references(tmp_path):
    code, out, err = run_cli(tmp_path, VM, "--uid", "u-1")
    assert code == 0, err
    assert "<name>demo_fedora</name>" in out
    assert '<memory unit="b">4294967296</memory>' in out  # u1.medium: 4Gi
    assert "OVMF_CODE.secboot.fd" in out and "<smm/>" in out  # rhel.9.desktop: EFI secure boot + SMM
    # the auto-attached tablet of the flat VM, as upstream starts the expanded VM: USB, with its controller
    assert '<input type="tablet" bus="usb">' in out and '<controller type="usb" index="0" model="qemu-xhci"/>' in out
    assert "/var/run/kubevirt-private/u-1/virt-vnc" in out


def test_vmi_is_converted_as_is(tmp_path):
    case = json.loads((CONFORMANCE / "cpu.model.json").read_text())
    code, out, _ = run_cli(tmp_path, yaml.safe_dump(case["domxml"]["input"]["vmi"]))
    assert code == 0
    assert xml_equal(out, case["domxml"]["expected"]["xml"])[0]


def test_missing_instancetype_is_a_rejection(tmp_path):
    code, out, err = run_cli(tmp_path, VM.replace("u1.medium", "nope.none"))
    assert code == 1 and out == ""
    assert "not found" in err


def test_converter_rejection_exits_1(tmp_path):
    vm = VM.replace("domain: {devices: {}}", "domain: {devices: {disks: [{name: ghost}]}}")
    code, _, err = run_cli(tmp_path, vm)
    assert code == 1 and "ghost" in err and len(err.strip().splitlines()) == 1


def test_unreadable_input_exits_2(tmp_path):
    code, _, err = run_cli(tmp_path, "kind: ConfigMap\nmetadata: {name: x}\n")
    assert code == 2 and err.startswith("error:")
    code, _, err = run_cli(tmp_path, "{not yaml: [")
    assert code == 2 and len(err.strip().splitlines()) == 1


def test_console_script_entry_point(tmp_path):
    path = tmp_path / "vm.yaml"
    path.write_text(VM)
    proc = subprocess.run([sys.executable, "-m", "instancetype_webhook", "domxml", "-f", str(path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.startswith("<domain")


def test_policy_chooses_how_the_vm_is_stored(tmp_path):
    code, reference, err = run_cli(tmp_path, VM, "--uid", "u-1", "--policy", "reference")
    assert code == 0, err
    code, flat, err = run_cli(tmp_path, VM, "--uid", "u-1")  # expand is the default: upstream's expanded VM
    assert code == 0, err
    assert flat == run_cli(tmp_path, VM, "--uid", "u-1", "--policy", "expand")[1]
    assert '<input type="tablet" bus="usb">' in flat and '<controller type="usb" index="0" model="qemu-xhci"/>' in flat
    assert '<input type="tablet" bus="virtio" model="virtio">' in reference
    code, kept, err = run_cli(tmp_path, VM, "--uid", "u-1", "--preserve-guest")  # the opt-in keeps virtio
    assert code == 0, err
    assert '<input type="tablet" bus="virtio" model="virtio">' in kept and 'model="qemu-xhci"' not in kept
    with pytest.raises(SystemExit) as exited:  # argparse refuses an unknown policy
        run_cli(tmp_path, VM, "--policy", "flatten")
    assert exited.value.code == 2


def test_a_kubevirt_object_is_the_cluster_configuration(tmp_path):
    kubevirt = ("---\napiVersion: kubevirt.io/v1\nkind: KubeVirt\nmetadata: {name: kubevirt, namespace: kubevirt}\n"
                "spec:\n  configuration:\n    architectureConfiguration: {defaultArchitecture: arm64}\n"
                "    smbios: {manufacturer: ACME}\n")
    vm = VM.replace("rhel.9.desktop", "fedora.arm64")
    code, out, err = run_cli(tmp_path, vm + kubevirt)
    assert code == 0, err
    assert 'arch="aarch64"' in out and ">ACME<" in out
    code, _, err = run_cli(tmp_path, vm + kubevirt + kubevirt)
    assert code == 2 and "KubeVirt" in err
