"""The host/launcher facts the converter needs and a VMI does not carry.

Defaults equal the converter context of the conformance oracle (shared/conformance/README.md): the
launcher of the VMI's own architecture (`architecture=None`; an explicit architecture must match the
VMI's), /dev/kvm present with emulation allowed, default SMBIOS, balloon stats every 10 s, free page
reporting and serial console log on, bochs video for EFI guests, the EFI firmware that architecture's
launcher image has in the OVMF directory (domxml/arch.py), qcow2 container disks, no block PVCs, and a
pod cpuset/host NUMA cell derived from the VMI. `instancetype_webhook.domxml.cluster` builds one from a KubeVirt CR.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final

from instancetype_webhook.domxml.arch import DEFAULT_OVMF_PATHS, IMAGE_FIRMWARE, EFIEnvironment, detect_efi

GIB: Final = 2**30


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
    architecture: str | None = None  # None: the launcher of the VMI's architecture
    hypervisor_device_available: bool = True
    allow_emulation: bool = True
    smbios: SMBios | None = field(default_factory=SMBios)
    mem_balloon_stats_period: int = 10
    free_page_reporting: bool = True
    serial_console_log: bool = True
    bochs_for_efi_guests: bool = True
    ovmf_dirs: Mapping[str, str] = field(default_factory=lambda: DEFAULT_OVMF_PATHS)  # per architecture
    firmware_files: Mapping[str, frozenset[str]] = field(default_factory=lambda: IMAGE_FIRMWARE)  # per architecture
    root_launcher: bool = False
    container_disk_format: str = "qcow2"
    container_disk_formats: Mapping[str, str] = field(default_factory=dict)
    block_pvcs: frozenset[str] = frozenset()
    block_dvs: frozenset[str] = frozenset()
    volumes_discard_ignore: frozenset[str] = frozenset()
    cpuset: tuple[int, ...] | None = None  # None: derived from the VMI like the oracle does
    numa_cells: tuple[NumaCell, ...] | None = None  # None: one cell holding the cpuset
    shared_cpuset_size: int = 16
    numa_distances: bool = True  # guest NUMA cells carry <distances> (KubeVirt main; releases.NUMA_DISTANCES)
    env: Mapping[str, str] = field(default_factory=dict)  # device-plugin variables (PCI addresses)

    def efi_environment(self, architecture: str) -> EFIEnvironment:
        """The EFI firmware the launcher of ``architecture`` finds in the OVMF directory it is given."""
        return detect_efi(architecture, self.ovmf_dirs.get(architecture, ""),
                          self.firmware_files.get(architecture, frozenset()))

    def pod_cpuset(self, vcpus: int, dedicated: bool, emulator_threads: int) -> tuple[int, ...]:
        if self.cpuset is not None:
            return self.cpuset
        count = vcpus + emulator_threads if dedicated else self.shared_cpuset_size
        return tuple(range(count))

    def host_numa_cells(self, cpuset: tuple[int, ...]) -> tuple[NumaCell, ...]:
        if self.numa_cells is not None:
            return self.numa_cells
        return (NumaCell(id=0, cpus=tuple(cpuset)),)

    def with_env(self, env: Mapping[str, str] | None) -> LauncherContext:
        if not env:
            return self
        return replace(self, env={**self.env, **env})


def context_from_converter(converter: Mapping[str, Any] | None) -> LauncherContext:
    """A context from a conformance case's ``input.converter`` object (only ``env`` is used there)."""
    converter = converter or {}
    return LauncherContext(env=dict(converter.get("env") or {}))
