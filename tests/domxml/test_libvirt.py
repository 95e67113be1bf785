"""Real libvirt checks of every domain XML the generator makes for the public corpus, for every architecture.

`shared/tools/libvirt-check.sh` (Debian's libvirt 11.3 + QEMU 10.0, a private unprivileged libvirtd):
- `validate` (RNG, tolerating the KubeVirt quirks the tool's header names) on every generated XML: both
  members of every `domxml` case (input.vmi and the started flat VM, under the case's kubevirtConfiguration),
  the started VM of every other expanded case, and every common preference that names an architecture
  (preferredArchitecture) with u1.large, amd64, arm64 and s390x alike;
- `define` on every XML whose VM upstream's admission webhook would let in, for each architecture whose
  QEMU is installed (CI installs qemu-system-arm and qemu-system-s390x from Debian; aarch64 is required);
- `boot` under TCG for three representative amd64 VMs (BIOS; EFI with secure boot; a preference-heavy
  Windows-style VM with Hyper-V, TPM, EFI and clock timers), each running 5 s, then destroyed; and one
  arm64 VM (fedora.arm64 + u1.large), whose AAVMF UEFI firmware must reach its shell on the serial console.

Upstream's own XML deviates from the strict schema in two more places that libvirt's parser accepts
(`define` passes): `type="pci"` on a `<hostdev><source><address>` and a CPU `<feature>` without `policy`.
Our XML must equal upstream's, so validation tolerates exactly those two (they are patched out and counted).

Without the tools the tests skip with one line naming the setup command; under CI=true a skip fails
the run (tests/conftest.py), and .ci/run installs them.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from lxml import etree

from instancetype_webhook.conformance.domxml import render_member, started_vmi
from instancetype_webhook.domxml import DomainError, render_domain, vmi_from_vm
from instancetype_webhook.domxml.stored import render_stored_vm
from instancetype_webhook.kubevirt.source import CLUSTER_PREFERENCE
from instancetype_webhook.sources.catalog import load_catalog
from tests.kit.libvirt_schema import SCHEMA, kubevirt_quirks_removed, upstream_rng_deviations
from tests.kit.needs import skip_missing
from tests.kit.shared_data import ROOT, SHARED, conformance_cases

pytestmark = pytest.mark.libvirt

TOOL = SHARED / "tools" / "libvirt-check.sh"
STATE = os.environ.get("DOMXML_LIBVIRT_STATE", "/tmp/libvirt-check-domxml")
BOOT_SECONDS = 5
ARM_BOOT_SECONDS = 20  # AAVMF under TCG reaches its shell in about 15 s
BOOT_VMS = {  # representative VMs of the public corpus, rendered from their expanded VM
    "bios": "common-instancetype.u1.small.typical",
    "efi-secure-boot": "common-preference.fedora.with-u1.large",
    "windows-style": "common-preference.windows.11.virtio.preference-only",
}


def _tools_missing() -> str | None:
    if not TOOL.is_file():
        return f"{TOOL} not found"
    for name in ("virsh", "virt-xml-validate"):
        if shutil.which(name) is None:
            return f"bash {TOOL.relative_to(ROOT)} setup ({name} not found)"
    if not Path("/usr/sbin/libvirtd").exists() and shutil.which("libvirtd") is None:
        return f"bash {TOOL.relative_to(ROOT)} setup (libvirtd not found)"
    return None


@pytest.fixture(scope="session")
def libvirt_check():
    missing = _tools_missing()
    if missing:
        skip_missing("real libvirt", missing)
    env = {**os.environ, "LIBVIRT_CHECK_STATE": STATE, "LIBVIRT_CHECK_KEEP_DAEMON": "1",
           "LIBVIRT_CHECK_KUBEVIRT_QUIRKS": "1", "LIBVIRT_CHECK_MARKER_TIMEOUT": "5"}

    def run(command: str, path: Path, *extra: str, timeout: int = 120,
            extra_env: dict | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(["bash", str(TOOL), command, str(path), *extra], env={**env, **(extra_env or {})},
                              capture_output=True, text=True, timeout=timeout)

    yield run
    subprocess.run(["bash", str(TOOL), "stop-daemon"], env=env, capture_output=True, timeout=60)


def _arch(xml: str) -> str:
    return etree.fromstring(xml.encode()).find("os/type").get("arch")


def arch_preferences(catalog) -> list[dict]:
    return [obj for obj in catalog.objects() if obj.get("kind") == CLUSTER_PREFERENCE
            and (obj.get("spec") or {}).get("preferredArchitecture")]


def _preference_vm(preference: dict) -> dict:
    """u1.large with the preference, stored as the VM mutating webhook leaves it (preferredArchitecture)."""
    return {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
            "metadata": {"name": preference["metadata"]["name"].replace(".", "-"), "namespace": "ns"},
            "spec": {"instancetype": {"name": "u1.large"}, "preference": {"name": preference["metadata"]["name"]},
                     "template": {"spec": {
                         "architecture": preference["spec"]["preferredArchitecture"],
                         "domain": {"devices": {}},
                         "volumes": [{"name": "rootdisk",
                                      "containerDisk": {"image": "quay.io/containerdisks/fedora:41"}},
                                     {"name": "cloudinit", "cloudInitNoCloud": {"userData": "#cloud-config\n"}}]}}}}


def _corpus() -> list[tuple[str, str, bool]]:
    """(name, XML, admitted by upstream's webhook) for every conformance VMI, every started expanded VM and
    every common preference that names an architecture (with u1.large)."""
    items = []
    for case in conformance_cases():
        admitted = bool(case.get("expectedValidate", {}).get("admission", {}).get("allowed", True))
        section = case.get("domxml")
        vm = case.get("expected", {}).get("vm")
        if section and "xml" in section["expected"]:
            items.append((f"case-{case['name']}", render_member(case, lambda s=section: s["input"]["vmi"]), admitted))
        if section and "xml" in section.get("fromVm", {}):
            items.append((f"fromvm-{case['name']}", render_member(case, lambda c=case: started_vmi(c)), admitted))
        elif vm and not section:
            try:
                xml = render_domain(vmi_from_vm(vm))
            except DomainError as exc:  # host devices need the device plugin's PCI addresses; firmware the
                assert "host-devices" in str(exc) or "EFI OVMF roms missing" in str(exc), exc  # image lacks
                continue
            items.append((f"vm-{case['name']}", xml, admitted))
    catalog = load_catalog(default_namespace="ns")
    for preference in arch_preferences(catalog):
        xml = render_stored_vm(_preference_vm(preference), catalog, "reference")
        items.append((f"preference-{preference['metadata']['name']}", xml, True))
    assert len({name for name, _, _ in items}) == len(items)
    return items


CORPUS = _corpus()


def _write(tmp_path: Path, name: str, xml: str) -> Path:
    path = tmp_path / f"{name}.xml"
    path.write_text(xml)
    return path


def test_corpus_is_large_and_covers_every_architecture(tmp_path):
    assert len(CORPUS) >= 250  # 2 x 71 domxml cases, the started VMs of the other cases, 15 preferences
    assert sum(1 for _, _, admitted in CORPUS if admitted) >= 230
    arches = {}
    for name, xml, _ in CORPUS:
        arches.setdefault(_arch(xml), []).append(name)
    assert len(arches["aarch64"]) >= 10 and len(arches["s390x"]) >= 15 and len(arches["x86_64"]) >= 200
    assert {n for n, _, _ in CORPUS if n.startswith("preference-")} >= {
        "preference-fedora.arm64", "preference-rhel.10.s390x.secex", "preference-rhel.9.arm64"}


QEMU_BINARIES = {"x86_64": "qemu-system-x86_64", "aarch64": "qemu-system-aarch64", "s390x": "qemu-system-s390x"}
REQUIRED_IN_CI = {"x86_64", "aarch64"}  # .ci/run installs qemu-system-arm (and qemu-system-s390x) from Debian


def _emulators() -> set[str]:
    present = {arch for arch, binary in QEMU_BINARIES.items() if shutil.which(binary)}
    missing = REQUIRED_IN_CI - present
    if missing:
        skip_missing(f"QEMU for {', '.join(sorted(missing))}",
                     "apt-get install qemu-system-x86 qemu-system-arm qemu-efi-aarch64 (.ci/run does)")
    return present


def test_every_generated_xml_validates(libvirt_check, tmp_path):
    """libvirt's installed domain RNG (what virt-xml-validate uses), in process: 250+ files in a second.
    The tool itself validates one XML of each architecture, and must agree."""
    schema = etree.RelaxNG(etree.parse(str(SCHEMA)))
    failures, deviations, counts = [], [], {}
    for name, xml, _ in CORPUS:
        patched, found = upstream_rng_deviations(xml)
        deviations.extend(found)
        if not schema.validate(etree.fromstring(kubevirt_quirks_removed(patched).encode())):
            failures.append(f"{name}: {schema.error_log.last_error}")
        counts[_arch(xml)] = counts.get(_arch(xml), 0) + 1
    assert not failures, "\n".join(failures)
    assert counts["aarch64"] >= 10 and counts["s390x"] >= 15
    # the public corpus exercises both tolerated deviations (GPU/host-device cases, preferredCPUFeatures)
    assert set(deviations) == {"hostdev-source-address-type", "cpu-feature-without-policy"}
    for arch in ("x86_64", "aarch64", "s390x"):
        name, xml, _ = next(item for item in CORPUS if _arch(item[1]) == arch)
        assert libvirt_check("validate", _write(tmp_path, name, upstream_rng_deviations(xml)[0])).returncode == 0


def test_strict_validation_needs_the_kubevirt_quirk_tolerance(libvirt_check, tmp_path):
    """Without the quirk tolerance the tool rejects our XML, as it rejects upstream's own golden file."""
    name, xml, _ = CORPUS[0]
    env_strict = {k: v for k, v in os.environ.items() if k != "LIBVIRT_CHECK_KUBEVIRT_QUIRKS"}
    env_strict["LIBVIRT_CHECK_STATE"] = STATE
    strict = subprocess.run(["bash", str(TOOL), "validate", str(_write(tmp_path, name, xml))], env=env_strict,
                            capture_output=True, text=True, timeout=60)
    assert strict.returncode == 1
    assert libvirt_check("validate", tmp_path / f"{name}.xml").returncode == 0


DEFINE_SCRIPT = """
import json, re, sys, libvirt
conn = libvirt.open(sys.argv[1])
failures = {}
for path in sys.argv[2:]:
    xml = open(path, encoding="utf-8").read()
    xml = re.sub(r'(<domain\\b[^>]*\\stype=")kvm(")', r"\\1qemu\\2", xml, count=1)  # no KVM for the daemon
    try:
        dom = conn.defineXML(xml)
        dom.XMLDesc(libvirt.VIR_DOMAIN_XML_INACTIVE)
        dom.undefineFlags(libvirt.VIR_DOMAIN_UNDEFINE_NVRAM)
    except libvirt.libvirtError as exc:
        failures[path] = str(exc)
print(json.dumps(failures))
"""
UNKNOWN_MACHINES = re.compile(r"rhel")  # RHEL's machine types: Debian's QEMU does not have them


def test_every_admitted_xml_defines(libvirt_check, tmp_path):
    """`virsh define` semantics for every admitted XML of each architecture whose QEMU is installed, through
    the tool's private daemon in one libvirt session (defineXML, dumpxml, undefine), like `libvirt-check.sh
    define` does per file. Domains upstream would not start are left out: RHEL machine types (Debian's QEMU
    lacks them; libvirt says so) and VMs without memory (virt-api refuses such a VMI)."""
    present = _emulators()
    libvirt_check("define", _write(tmp_path, CORPUS[0][0], CORPUS[0][1]))  # starts the daemon (and checks)
    paths, arches = [], {}
    for name, xml, ok in CORPUS:
        root = etree.fromstring(xml.encode())
        arch, machine = _arch(xml), root.find("os/type").get("machine")
        if not ok or arch not in present or UNKNOWN_MACHINES.search(machine) or root.findtext("memory") == "0":
            continue
        paths.append(str(_write(tmp_path, name, xml)))
        arches[arch] = arches.get(arch, 0) + 1
    uri = f"qemu+unix:///session?socket={STATE}/run/libvirt/libvirt-sock"
    result = subprocess.run(["/usr/bin/python3", "-c", DEFINE_SCRIPT, uri, *paths], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    failures = json.loads(result.stdout)
    assert not failures, "\n".join(f"{Path(k).stem}: {v}" for k, v in failures.items())
    assert arches["x86_64"] >= 200
    assert arches["aarch64"] >= 10  # every admitted arm64 domain defines under TCG


def test_secure_boot_without_smm_is_refused_by_libvirt_as_by_the_webhook(libvirt_check, tmp_path):
    refused = [(n, x) for n, x, ok in CORPUS if not ok and 'secure="yes"' in x and "<smm/>" not in x]
    assert refused, "the corpus has a secure-boot-without-SMM VM"
    result = libvirt_check("define", _write(tmp_path, refused[0][0], refused[0][1]))
    assert result.returncode == 1 and "SMM" in result.stderr


def _expanded_vm(case_name: str) -> dict:
    case = json.loads((SHARED / "conformance" / f"{case_name}.json").read_text())
    return case["expected"]["vm"]


@pytest.mark.parametrize("kind", list(BOOT_VMS))
def test_representative_vm_boots_under_tcg(libvirt_check, tmp_path, kind):
    xml = render_domain(vmi_from_vm(_expanded_vm(BOOT_VMS[kind])))
    if kind == "bios":
        assert "<loader" not in xml
    elif kind == "efi-secure-boot":
        assert 'secure="yes"' in xml and "<smm/>" in xml
    else:
        assert "<hyperv>" in xml and "<tpm " in xml and "<clock " in xml and 'secure="yes"' in xml
    start = time.monotonic()
    result = libvirt_check("boot", _write(tmp_path, kind, xml), str(BOOT_SECONDS), timeout=180)
    elapsed = time.monotonic() - start
    assert result.returncode == 0, result.stderr[-2000:]
    assert "PASS boot" in result.stderr and "destroyed and undefined" in result.stderr
    assert elapsed < 120


def test_arm64_uefi_firmware_reaches_its_shell_under_tcg(libvirt_check, tmp_path):
    """fedora.arm64 with u1.large: the AAVMF firmware the XML names boots under TCG (the placeholder disks
    hold nothing bootable, so the firmware falls through to the EFI shell) and prints it on the serial log."""
    _emulators()
    if not Path("/usr/share/AAVMF/AAVMF_CODE.fd").is_file():
        skip_missing("the AAVMF firmware", "apt-get install qemu-efi-aarch64 (.ci/run does)")
    catalog = load_catalog(default_namespace="ns")
    preference = next(p for p in arch_preferences(catalog) if p["metadata"]["name"] == "fedora.arm64")
    xml = render_stored_vm(_preference_vm(preference), catalog, "reference", uid="arm-boot")
    assert "/usr/share/AAVMF/AAVMF_CODE.fd" in xml and 'machine="virt"' in xml
    sandboxes = Path(STATE) / "sandbox"
    before = set(sandboxes.glob("boot.*"))
    result = libvirt_check("boot", _write(tmp_path, "arm64-uefi", xml), str(ARM_BOOT_SECONDS), timeout=240,
                           extra_env={"LIBVIRT_CHECK_PAYLOAD": "none", "LIBVIRT_CHECK_KEEP_SANDBOX": "1"})
    try:
        assert result.returncode == 0, result.stderr[-2000:]
        logs = [p for d in set(sandboxes.glob("boot.*")) - before for p in d.rglob("virt-serial0-log")]
        assert logs, result.stderr[-2000:]
        serial = logs[0].read_bytes().decode(errors="replace")
        assert "UEFI firmware" in serial and "Shell>" in serial, serial[-1500:]
    finally:
        for sandbox in set(sandboxes.glob("boot.*")) - before:
            shutil.rmtree(sandbox, ignore_errors=True)
