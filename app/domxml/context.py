"""The host/launcher facts the converter needs and a VMI does not carry.

Defaults equal the converter context of the conformance oracle (shared/conformance/README.md): amd64,
/dev/kvm present with emulation allowed, default SMBIOS, balloon stats every 10 s, free page reporting
and serial console log on, bochs video for EFI guests, OVMF under /usr/share/edk2/ovmf with only the
secure-boot code file, qcow2 container disks, no block PVCs, and a pod cpuset/host NUMA cell derived
from the VMI.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Mapping

GIB = 2**30


@dataclass(frozen=True)
class SMBios:
    manufacturer: str = "KubeVirt"
    family: str = "KubeVirt"
    product: str = "None"
    sku: str = ""
    version: str = ""


@dataclass(frozen=True)
class NumaCell:
    id: int
    cpus: tuple[int, ...]
    memory_bytes: int = 64 * GIB
    page_sizes: tuple[int, ...] = (4096, 2 * 2**20, GIB)
    distances: Mapping[int, int] | None = None  # other cell id -> distance; self is 10


@dataclass(frozen=True)
class LauncherContext:
    architecture: str = "amd64"
    hypervisor_device_available: bool = True
    allow_emulation: bool = True
    smbios: SMBios | None = field(default_factory=SMBios)
    mem_balloon_stats_period: int = 10
    free_page_reporting: bool = True
    serial_console_log: bool = True
    bochs_for_efi_guests: bool = True
    ovmf_dir: str = "/usr/share/edk2/ovmf"
    efi_code: str | None = None  # OVMF_CODE.fd is absent on the oracle's image
    efi_vars: str | None = "OVMF_VARS.fd"
    efi_code_secure_boot: str | None = "OVMF_CODE.secboot.fd"
    efi_vars_secure_boot: str | None = "OVMF_VARS.secboot.fd"
    root_launcher: bool = False
    container_disk_format: str = "qcow2"
    container_disk_formats: Mapping[str, str] = field(default_factory=dict)
    block_pvcs: frozenset[str] = frozenset()
    block_dvs: frozenset[str] = frozenset()
    volumes_discard_ignore: frozenset[str] = frozenset()
    cpuset: tuple[int, ...] | None = None  # None: derived from the VMI like the oracle does
    numa_cells: tuple[NumaCell, ...] | None = None  # None: one cell holding the cpuset
    shared_cpuset_size: int = 16
    env: Mapping[str, str] = field(default_factory=dict)  # device-plugin variables (PCI addresses)

    def efi_files(self, secure_boot: bool) -> tuple[str, str] | None:
        """(code, vars) paths for EFI, with virt-launcher's fallback to the secure-boot code file."""
        if secure_boot:
            code, vars_ = self.efi_code_secure_boot, self.efi_vars_secure_boot
        else:
            code, vars_ = self.efi_code or self.efi_code_secure_boot, self.efi_vars
        if not code or not vars_:
            return None
        return f"{self.ovmf_dir}/{code}", f"{self.ovmf_dir}/{vars_}"

    def pod_cpuset(self, vcpus: int, dedicated: bool, emulator_threads: int) -> tuple[int, ...]:
        if self.cpuset is not None:
            return self.cpuset
        count = vcpus + emulator_threads if dedicated else self.shared_cpuset_size
        return tuple(range(count))

    def host_numa_cells(self, cpuset: tuple[int, ...]) -> tuple[NumaCell, ...]:
        if self.numa_cells is not None:
            return self.numa_cells
        return (NumaCell(id=0, cpus=tuple(cpuset)),)

    def with_env(self, env: Mapping[str, str] | None) -> "LauncherContext":
        if not env:
            return self
        return replace(self, env={**self.env, **env})


def context_from_converter(converter: Mapping | None) -> LauncherContext:
    """A context from a conformance case's ``input.converter`` object (only ``env`` is used there)."""
    converter = converter or {}
    return LauncherContext(env=dict(converter.get("env") or {}))
