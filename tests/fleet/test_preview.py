"""The upgrade preview: `audit --kubevirt-version R` on a (fake) cluster running KubeVirt v1.8.4 lists the
stored VMs release R would answer differently, and only those."""
from __future__ import annotations

import json

import pytest

from instancetype_webhook.admission.whatif import what_if
from instancetype_webhook.cli import main
from instancetype_webhook.fleet.finding import Finding
from instancetype_webhook.fleet.preview import answer_of, changes
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


# v1.8's preference field (v1.7's API server prunes it): the preview as v1.7 must not flatten it into the VM
TLBFLUSH = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachinePreference",
            "metadata": {"name": "tlb", "namespace": "older"},
            "spec": {"features": {"preferredHyperv": {"tlbflush": {"enabled": True, "direct": {"enabled": True}}}}}}


UNDECODABLE = {"metadata": {"name": "fedora-v1alpha2", "namespace": "pinned"},
               "data": {"apiVersion": "instancetype.kubevirt.io/v1alpha2", "kind": "VirtualMachineClusterPreference",
                        "metadata": {"name": "fedora"}, "spec": {}},
               "revision": 1}


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
    fake.add(TLBFLUSH)
    tlb = vm("tlb", "older", "u1.small", None)
    tlb["spec"]["preference"] = {"name": "tlb", "kind": "VirtualMachinePreference"}
    fake.add(tlb)
    fake.add_revision(UNDECODABLE)
    legacy = vm("legacy", "pinned", "u1.small", None)  # its revision names an API version no scheme registers
    legacy["spec"]["preference"] = {"name": "fedora", "revisionName": UNDECODABLE["metadata"]["name"]}
    fake.add(legacy)
    path = tmp_path_factory.mktemp("kube") / "kubeconfig"
    path.write_text(fake.kubeconfig())
    yield str(path)
    fake.stop()


def audit(capsys, config: str, *argv: str, namespace: str = "apps") -> tuple[int, str, str]:
    code = main(["audit", "--kubeconfig", config, "-n", namespace, "--policy", "expand", *argv])
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


def test_a_refusal_in_other_words_is_listed_with_the_releases_words(capsys, config) -> None:
    """Refused as both releases, for another reason: a revision's decode error names the line of each
    release's client-go scheme (v1.8.4: register.go:43, v1.9.0: 44)."""
    code, out, err = audit(capsys, config, "-o", "json", "--kubevirt-version", "v1.9.0", namespace="pinned")
    assert code == 1, err  # the exit status of the cluster's own release: a VM is refused
    document = json.loads(out)
    assert [(f["name"], f["action"]) for f in document["vms"]] == [("legacy", "refuse")]
    assert document["vms"][0]["reason"].endswith('scheme/register.go:43"')
    [legacy] = document["preview"]["vms"]
    assert (legacy["action"], legacy["actionThen"]) == ("refuse", "refuse")
    assert legacy["changes"][0].startswith("refused otherwise: failed to decode object in ControllerRevision: ")
    assert legacy["changes"][0].endswith('scheme/register.go:44"')
    same = json.loads(audit(capsys, config, "-o", "json", "--kubevirt-version", "v1.8", namespace="pinned")[1])
    assert same["preview"]["vms"] == []  # the cluster's own release refuses it in the same words


def test_an_older_release_reads_the_preference_as_its_api_server_serves_it(capsys, config) -> None:
    """v1.7's API server prunes `tlbflush.direct` (v1.8's field) from the preference it serves: flattened as v1.7,
    the VM no longer gets it, and the preview says so; the cluster's objects themselves are unchanged."""
    code, out, err = audit(capsys, config, "-o", "json", "--kubevirt-version", "v1.7.4", namespace="older")
    assert code == 0, err
    [tlb] = json.loads(out)["preview"]["vms"]
    assert (tlb["name"], tlb["action"], tlb["actionThen"]) == ("tlb", "flatten", "flatten")
    assert any("tlbflush" in change and "direct" in change for change in tlb["changes"]), tlb
    again = json.loads(audit(capsys, config, "-o", "json", "--kubevirt-version", "v1.8", namespace="older")[1])
    assert again["preview"]["vms"] == []  # the cluster's own release: nothing pruned, nothing differs


def told(now: Finding, then: Finding, domains: tuple[str | None, str | None] = (None, None)) -> list[str]:
    """The preview's lines for two findings (and domains), through the what-if."""
    return changes(now, then, what_if(answer_of(now, domains[0], "v1.8.4"), answer_of(then, domains[1], "v1.9.0")))


def test_the_same_finding_and_domain_tell_nothing() -> None:
    finding = Finding("apps", "vm", "flatten", fields=["/spec/a"], causes=[{"message": "m"}], reason="why")
    assert told(finding, finding, ("<domain/>", "<domain/>")) == []
    other_reason = Finding("apps", "vm", "flatten", fields=["/spec/a"], causes=[{"message": "m"}], reason="other")
    assert told(finding, other_reason) == []  # only a refusal's reason is part of the verdict


def test_another_action_is_told_once_and_a_refusal_for_another_reason_with_its_reason() -> None:
    assert told(Finding("apps", "vm", "flatten"), Finding("apps", "vm", "refuse", reason="no")) == [
        "action flatten -> refuse"]
    assert told(Finding("apps", "vm", "refuse", reason="old words"),
                Finding("apps", "vm", "refuse", reason="new words")) == ["refused otherwise: new words"]
    assert told(Finding("apps", "vm", "unresolved", reason="a"),
                Finding("apps", "vm", "unresolved", reason="b")) == ["refused otherwise: b"]


def test_fields_and_causes_on_one_side_only_are_told_in_order() -> None:
    now = Finding("apps", "vm", "refuse", fields=["/spec/b", "/spec/kept", "/spec/a"],
                  causes=[{"message": "kept"}, {"message": "z gone"}, {"message": "a gone"}, {"message": "a gone"}])
    then = Finding("apps", "vm", "refuse", fields=["/spec/kept", "/spec/d", "/spec/c"],
                   causes=[{"message": "kept"}, {"message": "new"}])
    assert told(now, then) == ["writes no longer: /spec/a", "writes no longer: /spec/b", "writes also: /spec/c",
                               "writes also: /spec/d", "cause no longer: a gone", "cause no longer: z gone",
                               "cause also: new"]


def test_a_domain_that_differs_is_told_in_one_line_with_its_first_four_changed_lines() -> None:
    flat = Finding("apps", "vm", "flatten")
    few = told(flat, flat, ("<domain>\n  <a/>\n</domain>", "<domain>\n  <b/>\n</domain>"))
    assert few == ["domain differs (2 lines): -  <a/>; +  <b/>"]
    many = told(flat, flat, ("<d>\n" + "\n".join(f"<a{i}/>" for i in range(3)),
                             "<d>\n" + "\n".join(f"<b{i}/>" for i in range(3))))
    assert many == ["domain differs (6 lines): -<a0/>; -<a1/>; -<a2/>; +<b0/>; ..."]
