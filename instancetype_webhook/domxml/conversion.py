"""What the builders share: the defaulted VMI, the launcher context and values derived once from both."""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from instancetype_webhook.domxml.arch import ArchTraits, traits_for
from instancetype_webhook.domxml.context import LauncherContext
from instancetype_webhook.domxml.quantity import quantity_bytes, quantity_value


@dataclass
class Conversion:
    vmi: dict[str, Any]
    ctx: LauncherContext

    @property
    def meta(self) -> dict[str, Any]:
        return self.vmi.get("metadata") or {}

    @property
    def name(self) -> str:
        return self.meta.get("name") or ""

    @property
    def namespace(self) -> str:
        return self.meta.get("namespace") or "default"

    @property
    def uid(self) -> str:
        return self.meta.get("uid") or ""

    @property
    def annotations(self) -> dict[str, Any]:
        return self.meta.get("annotations") or {}

    @property
    def spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = self.vmi["spec"]  # render_domain_element checked it is an object
        return spec

    @property
    def domain(self) -> dict[str, Any]:
        domain: dict[str, Any] = self.spec["domain"]  # apply_vmi_defaults made it an object
        return domain

    @property
    def devices(self) -> dict[str, Any]:
        return self.domain.get("devices") or {}

    @property
    def cpu(self) -> dict[str, Any]:
        return self.domain.get("cpu") or {}

    @property
    def memory(self) -> dict[str, Any]:
        return self.domain.get("memory") or {}

    @property
    def features(self) -> dict[str, Any]:
        return self.domain.get("features") or {}

    @property
    def firmware(self) -> dict[str, Any]:
        return self.domain.get("firmware") or {}

    @property
    def architecture(self) -> str:
        """The launcher's (= converter's) architecture: the context's, else the VMI's (amd64 when empty)."""
        return self.ctx.architecture or self.spec.get("architecture") or "amd64"

    @cached_property
    def arch(self) -> ArchTraits:
        return traits_for(self.architecture)

    @property
    def amd64(self) -> bool:
        return self.architecture == "amd64"

    @cached_property
    def topology(self) -> tuple[int, int, int]:
        """(sockets, cores, threads) as requested, before CPU hotplug widens the sockets."""
        cpu = self.cpu
        sockets, cores, threads = cpu.get("sockets") or 0, cpu.get("cores") or 0, cpu.get("threads") or 0
        if sockets or cores or threads:
            return sockets or 1, cores or 1, threads or 1
        resources = self.domain.get("resources") or {}
        for key in ("limits", "requests"):
            value = (resources.get(key) or {}).get("cpu")
            if value is not None:
                return max(quantity_value(value), 1), 1, 1
        return 1, 1, 1

    @property
    def vcpus(self) -> int:
        sockets, cores, threads = self.topology
        return sockets * cores * threads

    @property
    def dedicated(self) -> bool:
        return bool(self.cpu.get("dedicatedCpuPlacement"))

    @property
    def isolate_emulator(self) -> bool:
        return self.dedicated and bool(self.cpu.get("isolateEmulatorThread"))

    @property
    def realtime(self) -> bool:
        return self.cpu.get("realtime") is not None

    @property
    def numa_passthrough(self) -> bool:
        return (self.cpu.get("numa") or {}).get("guestMappingPassthrough") is not None

    @property
    def hugepage_size(self) -> int | None:
        size = (self.memory.get("hugepages") or {}).get("pageSize")
        return quantity_bytes(size) if size else None

    @property
    def virtio_model(self) -> str:
        return self.arch.virtio_model(bool(self.devices.get("useVirtioTransitional")))

    @property
    def guest_memory(self) -> int:
        guest = self.memory.get("guest")
        if guest is None:
            resources = self.domain.get("resources") or {}
            guest = (resources.get("limits") or {}).get("memory") or (resources.get("requests") or {}).get("memory")
        if guest is None:  # upstream converts an unset quantity as zero bytes
            return 0
        return quantity_bytes(guest)

    @property
    def efi(self) -> dict[str, Any] | None:
        bootloader = self.firmware.get("bootloader") or {}
        return bootloader.get("efi") if bootloader.get("efi") is not None else None

    @property
    def secure_boot(self) -> bool:
        efi = self.efi
        return efi is not None and efi.get("secureBoot", True) is not False

    @property
    def launch_security(self) -> dict[str, Any] | None:
        return self.domain.get("launchSecurity")

    @property
    def sev(self) -> bool:
        security = self.launch_security or {}
        return security.get("sev") is not None or security.get("snp") is not None

    @property
    def secure_execution(self) -> bool:
        """IBM Secure Execution (s390x with launchSecurity): no <launchSecurity>, iommu on every virtio device."""
        return self.launch_security is not None and self.spec.get("architecture") == "s390x"

    @property
    def iommu(self) -> bool:
        """Virtio devices need iommu="on" (SEV/SNP or Secure Execution)."""
        return self.sev or self.secure_execution

    @cached_property
    def memfd(self) -> bool:
        """Memory backed by memfd: hugepages (unless the annotation disables it) or shared memory."""
        if not self.arch.memfd:
            return False
        if self.memory.get("hugepages") is not None and self.annotations.get("kubevirt.io/memfd") != "false":
            return True
        return self.shared_memory

    @property
    def shared_memory(self) -> bool:
        """virtiofs filesystems or a passt-bound interface need shared guest memory."""
        if self.devices.get("filesystems"):
            return True
        return any((i.get("binding") or {}).get("name") == "passt" or i.get("passtBinding") is not None
                   for i in self.devices.get("interfaces") or [])

    @property
    def volumes(self) -> dict[str, tuple[int, dict[str, Any]]]:
        return {v.get("name"): (i, v) for i, v in enumerate(self.spec.get("volumes") or [])}

    @property
    def networks(self) -> dict[str, dict[str, Any]]:
        return {n.get("name"): n for n in self.spec.get("networks") or []}
