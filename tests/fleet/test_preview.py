"""The upgrade preview: `audit --kubevirt-version R` on a (fake) cluster running KubeVirt v1.8.4 lists the
stored VMs release R would answer differently, and only those."""
from __future__ import annotations

import json

import pytest

from instancetype_webhook.cli import main
from instancetype_webhook.kubevirt.releases import resolve
from instancetype_webhook.sources.catalog import load_catalog
from tests.fakeapi.apiserver import FakeAPIServer
from tests.kit.fleet_cluster import vm

KUBEVIRT = {"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
            "metadata": {"name": "kubevirt", "namespace": "kubevirt"}, "spec": {"configuration": {}},
            "status": {"phase": "Deployed", "observedKubeVirtVersion": "v1.8.4", "targetKubeVirtVersion": "v1.8.4"}}


PANICKY = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachinePreference",
           "metadata": {"name": "panicky", "namespace": "apps"},
           "spec": {"devices": {"preferredPanicDeviceModel": "hyperv"}}}


@pytest.fixture(scope="module")
def config(tmp_path_factory) -> str:
    fake = FakeAPIServer()
    for obj in load_catalog(release=resolve("v1.8.4")).objects():  # as v1.8.4's API server stored them
        fake.add(obj)
    fake.add(KUBEVIRT)
    fake.add(vm("plain", "apps", "u1.small", None))  # BIOS, no NUMA: the same on every release
    fake.add(vm("numa", "apps", "cx1.large1gi", None))  # guest NUMA cells: <distances> on main only
    fake.add(vm("efi", "apps", "u1.medium", "fedora"))  # EFI firmware: /usr/share/edk2/ovmf from v1.9
    fake.add(PANICKY)
    panic = vm("panic", "apps", "u1.small", None)  # BIOS; its preference creates a panic device from v1.9
    panic["spec"]["preference"] = {"name": "panicky", "kind": "VirtualMachinePreference"}
    fake.add(panic)
    path = tmp_path_factory.mktemp("kube") / "kubeconfig"
    path.write_text(fake.kubeconfig())
    yield str(path)
    fake.stop()


def audit(capsys, config: str, *argv: str) -> tuple[int, str, str]:
    code = main(["audit", "--kubeconfig", config, "-n", "apps", "--policy", "expand", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def preview_of(capsys, config: str, release: str) -> dict:
    code, out, err = audit(capsys, config, "-o", "json", "--kubevirt-version", release)
    assert code == 0, err
    return json.loads(out)["preview"]


def test_the_next_minor_changes_the_efi_vms_domain_and_gives_the_panic_vm_its_device(capsys, config) -> None:
    preview = preview_of(capsys, config, "v1.9.0")
    assert (preview["cluster"], preview["release"]) == ("v1.8.4", "v1.9.0")
    assert [entry["name"] for entry in preview["vms"]] == ["efi", "panic"]
    efi, panic = preview["vms"]
    assert any("panicDevices" in change for change in panic["changes"]), panic
    assert efi["action"] == efi["actionThen"] == "flatten"
    assert len(efi["changes"]) == 1 and efi["changes"][0].startswith("domain differs")
    assert "/usr/share/OVMF" in efi["changes"][0] and "/usr/share/edk2/ovmf" in efi["changes"][0]


def test_main_also_changes_the_numa_vms_domain(capsys, config) -> None:
    preview = preview_of(capsys, config, "main")
    assert sorted(entry["name"] for entry in preview["vms"]) == ["efi", "numa", "panic"]
    numa = next(entry for entry in preview["vms"] if entry["name"] == "numa")
    assert "distances" in numa["changes"][0] or "sibling" in numa["changes"][0]


def test_the_table_lists_only_the_differences(capsys, config) -> None:
    code, out, _ = audit(capsys, config, "--kubevirt-version", "v1.9.0")
    assert code == 0
    head, _, tail = out.partition("\nKubeVirt v1.9.0 would answer 2 of 4 VMs differently (the cluster runs v1.8.4)\n")
    assert tail.startswith("apps/efi  flatten\n  - domain differs")
    assert "plain" not in tail and "numa" not in tail
    assert "plain" in head  # the findings table as the cluster's own release answers is still there


def test_the_clusters_own_release_has_nothing_to_preview(capsys, config) -> None:
    code, out, _ = audit(capsys, config, "--kubevirt-version", "v1.8.4")
    assert code == 0 and "the cluster runs KubeVirt v1.8.4 already: no preview to make" in out
    assert preview_of(capsys, config, "v1.8")["vms"] == []


def test_without_a_release_audit_stays_as_it_was(capsys, config) -> None:
    code, out, _ = audit(capsys, config, "-o", "json")
    assert code == 0 and "preview" not in json.loads(out)
