"""What differs between the architectures virt-launcher supports (upstream `converter/arch`, the launcher
domain defaulter `api/arch-defaulter`, and the firmware each architecture's launcher image ships).

A virt-launcher converts with the converter of its own node's architecture (the VMI's, since virt-handler
only runs it on a matching node). Upstream has converters for amd64, arm64 and s390x only; ppc64le has no
launcher image (its converter would fall back to amd64's and write an x86_64 domain), so it is refused.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from instancetype_webhook.domxml.errors import DomainError


@dataclass(frozen=True)
class ArchTraits:
    name: str  # the KubeVirt name: amd64, arm64, s390x
    os_arch: str  # <os><type arch=...>
    default_machine: str  # the launcher defaulter's machine when the VMI has none
    usb_always: bool = False  # arm64: a USB controller for the auto-attached tablet/keyboard
    usb_never: bool = False  # s390x: no USB at all
    cpu_hotplug: bool = True  # <vcpus> and the widened topology
    smbios_mode: bool = True  # <os><smbios mode="sysinfo"/>
    vmport: bool = False  # <features><vmport state="off"/>
    rom_tuning: bool = True  # <rom enabled="no"/> on tap interfaces
    mpx_validation: bool = False  # a named CPU model gets <feature name="mpx" policy="disable"/>
    pci_hole64: bool = False  # the kubevirt.io/disablePCIHole64 annotation is honoured
    memfd: bool = True  # memfd memory backing (and its synthetic NUMA cell)
    virtio_model_fixed: str | None = None  # s390x: always "virtio" (the PCI-only models do not exist there)
    scsi_model: str | None = None  # s390x: "virtio-scsi"; else the virtio model
    video: str = "virtio"  # the default video model (amd64: vga, or bochs for EFI)
    extra_inputs: tuple[tuple[str, str], ...] = ()  # (type, bus) added while graphics are attached

    def virtio_model(self, transitional: bool) -> str:
        if self.virtio_model_fixed:
            return self.virtio_model_fixed
        return "virtio-transitional" if transitional else "virtio-non-transitional"


AMD64: Final = ArchTraits(name="amd64", os_arch="x86_64", default_machine="q35", vmport=True, mpx_validation=True,
                          pci_hole64=True, video="vga")
ARM64: Final = ArchTraits(name="arm64", os_arch="aarch64", default_machine="virt", usb_always=True, cpu_hotplug=False,
                          extra_inputs=(("tablet", "usb"), ("keyboard", "usb")))
S390X: Final = ArchTraits(name="s390x", os_arch="s390x", default_machine="s390-ccw-virtio", usb_never=True,
                          smbios_mode=False, rom_tuning=False, memfd=False, virtio_model_fixed="virtio",
                          scsi_model="virtio-scsi", extra_inputs=(("keyboard", "virtio"),))

TRAITS: Final[Mapping[str, ArchTraits]] = MappingProxyType({t.name: t for t in (AMD64, ARM64, S390X)})


def traits_for(architecture: str) -> ArchTraits:
    traits = TRAITS.get(architecture)
    if traits is None:
        raise DomainError(f"no virt-launcher for architecture {architecture!r}: upstream's converter supports "
                          "amd64, arm64 and s390x only")
    return traits


# -- EFI firmware ------------------------------------------------------------------------------------------

# The firmware files each launcher image has in its OVMF directory (amd64: Fedora's edk2-ovmf without the
# plain OVMF_CODE.fd; arm64: edk2-aarch64 without secure-boot builds; s390x: none, it boots without a loader).
IMAGE_FIRMWARE: Final[Mapping[str, frozenset[str]]] = MappingProxyType({
    "amd64": frozenset({"OVMF_CODE.secboot.fd", "OVMF_VARS.fd", "OVMF_VARS.secboot.fd"}),
    "arm64": frozenset({"AAVMF_CODE.fd", "AAVMF_VARS.fd"}),
    "s390x": frozenset(),
})
# virt-config's per-architecture OVMF path defaults (architectureConfiguration.<arch>.ovmfPath).
DEFAULT_OVMF_PATHS: Final[Mapping[str, str]] = MappingProxyType({
    "amd64": "/usr/share/edk2/ovmf", "arm64": "/usr/share/AAVMF", "s390x": "",
})


@dataclass(frozen=True)
class EFIEnvironment:
    """The (code, vars) pairs found, like virt-launcher's DetectEFIEnvironment (SEV/SNP/TDX files: none)."""

    code: str = ""
    vars: str = ""
    code_secure_boot: str = ""
    vars_secure_boot: str = ""

    def files(self, secure_boot: bool) -> tuple[str, str] | None:
        code, vars_ = (self.code_secure_boot, self.vars_secure_boot) if secure_boot else (self.code, self.vars)
        return (code, vars_) if code and vars_ else None


def detect_efi(architecture: str, directory: str, present: frozenset[str]) -> EFIEnvironment:
    def found(name: str) -> str:
        return f"{directory.rstrip('/')}/{name}" if directory and name in present else ""

    if architecture == "arm64":
        return EFIEnvironment(code=found("AAVMF_CODE.fd"), vars=found("AAVMF_VARS.fd"))
    # the secure-boot code file is preferred for plain EFI too; OVMF_CODE.fd only when it is missing
    code = found("OVMF_CODE.secboot.fd") or found("OVMF_CODE.fd")
    return EFIEnvironment(code=code, vars=found("OVMF_VARS.fd"), code_secure_boot=found("OVMF_CODE.secboot.fd"),
                          vars_secure_boot=found("OVMF_VARS.secboot.fd"))
