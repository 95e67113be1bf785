"""Real libvirt checks of every domain XML the generator makes for the public corpus.

`shared/tools/libvirt-check.sh` (Debian's libvirt 11.3 + QEMU 10.0, a private unprivileged libvirtd):
- `validate` (RNG, tolerating the KubeVirt quirks the tool's header names) on every generated XML,
- `define` on every XML whose VM upstream's admission webhook would let in,
- `boot` under TCG for three representative VMs (BIOS; EFI with secure boot; a preference-heavy
  Windows-style VM with Hyper-V, TPM, EFI and clock timers), each running 5 s, then destroyed.

Upstream's own XML deviates from the strict schema in two more places that libvirt's parser accepts
(`define` passes): `type="pci"` on a `<hostdev><source><address>` and a CPU `<feature>` without `policy`.
Our XML must equal upstream's, so validation tolerates exactly those two (they are patched out and counted).

Without the tools the tests skip with one line naming the setup command; under CI=true a skip fails
the run (tests/conftest.py), and .ci/run installs them.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from lxml import etree

from app.domxml import DomainError, context_from_converter, render_domain, vmi_from_vm
from tests.needs import skip_missing
from tests.shared_data import ROOT, SHARED, conformance_cases

pytestmark = pytest.mark.libvirt

TOOL = SHARED / "tools" / "libvirt-check.sh"
STATE = os.environ.get("DOMXML_LIBVIRT_STATE", "/tmp/libvirt-check-domxml")
BOOT_SECONDS = 5
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

    def run(command: str, path: Path, *extra: str, timeout: int = 120) -> subprocess.CompletedProcess:
        return subprocess.run(["bash", str(TOOL), command, str(path), *extra], env=env, capture_output=True,
                              text=True, timeout=timeout)

    yield run
    subprocess.run(["bash", str(TOOL), "stop-daemon"], env=env, capture_output=True, timeout=60)


def _corpus() -> list[tuple[str, str, bool]]:
    """(name, XML, admitted by upstream's webhook) for every conformance VMI and every expanded VM."""
    items = []
    for case in conformance_cases():
        admitted = bool(case.get("expectedValidate", {}).get("admission", {}).get("allowed", True))
        section = case.get("domxml")
        if section and "xml" in section["expected"]:
            xml = render_domain(section["input"]["vmi"], context_from_converter(section["input"].get("converter")))
            items.append((f"case-{case['name']}", xml, admitted))
        vm = case.get("expected", {}).get("vm")
        arch = ((vm or {}).get("spec", {}).get("template", {}).get("spec", {}) or {}).get("architecture", "amd64")
        if vm and arch == "amd64" and not section:
            try:
                xml = render_domain(vmi_from_vm(vm))
            except DomainError as exc:  # host devices need the device plugin's PCI addresses
                assert "host-devices" in str(exc), exc
                continue
            items.append((f"vm-{case['name']}", xml, admitted))
    assert len({name for name, _, _ in items}) == len(items)
    return items


CORPUS = _corpus()


def upstream_rng_deviations(xml: str) -> tuple[str, list[str]]:
    """The XML with upstream's two extra schema deviations patched out, and which ones were found."""
    root = etree.fromstring(xml.encode())
    found = []
    for address in root.iterfind("devices/hostdev/source/address"):
        if "type" in address.attrib:
            del address.attrib["type"]
            found.append("hostdev-source-address-type")
    for feature in root.iterfind("cpu/feature"):
        if "policy" not in feature.attrib:
            feature.set("policy", "require")
            found.append("cpu-feature-without-policy")
    return etree.tostring(root, encoding="unicode"), found


def _write(tmp_path: Path, name: str, xml: str) -> Path:
    path = tmp_path / f"{name}.xml"
    path.write_text(xml)
    return path


def test_corpus_is_large(tmp_path):
    assert len(CORPUS) >= 120  # 57 domxml cases + the expanded VMs of the other cases
    assert sum(1 for _, _, admitted in CORPUS if admitted) >= 100


def test_every_generated_xml_validates(libvirt_check, tmp_path):
    failures, deviations = [], []
    for name, xml, _ in CORPUS:
        patched, found = upstream_rng_deviations(xml)
        deviations.extend(found)
        result = libvirt_check("validate", _write(tmp_path, name, patched))
        if result.returncode != 0:
            failures.append(f"{name}: {result.stderr.strip().splitlines()[-1:]}")
    assert not failures, "\n".join(failures)
    # the public corpus exercises both tolerated deviations (GPU/host-device cases, preferredCPUFeatures)
    assert set(deviations) == {"hostdev-source-address-type", "cpu-feature-without-policy"}


def test_strict_validation_needs_the_kubevirt_quirk_tolerance(libvirt_check, tmp_path):
    """Without the quirk tolerance the tool rejects our XML, as it rejects upstream's own golden file."""
    name, xml, _ = CORPUS[0]
    env_strict = {k: v for k, v in os.environ.items() if k != "LIBVIRT_CHECK_KUBEVIRT_QUIRKS"}
    env_strict["LIBVIRT_CHECK_STATE"] = STATE
    strict = subprocess.run(["bash", str(TOOL), "validate", str(_write(tmp_path, name, xml))], env=env_strict,
                            capture_output=True, text=True, timeout=60)
    assert strict.returncode == 1
    assert libvirt_check("validate", tmp_path / f"{name}.xml").returncode == 0


def test_every_admitted_xml_defines(libvirt_check, tmp_path):
    failures = []
    admitted = [(name, xml) for name, xml, ok in CORPUS if ok]
    for name, xml in admitted:
        result = libvirt_check("define", _write(tmp_path, name, xml))
        if result.returncode != 0:
            failures.append(f"{name}: {result.stderr.strip().splitlines()[-2:]}")
    assert not failures, "\n".join(failures)


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
