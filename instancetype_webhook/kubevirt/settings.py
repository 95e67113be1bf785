"""Cluster settings the expansion and validation depend on (from the KubeVirt CR's `spec.configuration`,
see `instancetype_webhook.kubevirt.configuration`); the defaults equal upstream's on an amd64 cluster."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from instancetype_webhook.kubevirt.releases import MAIN_PROFILE, ReleaseProfile

# Upstream's default machine type per architecture (virt-config `architectureConfiguration`).
DEFAULT_MACHINE_TYPES: Mapping[str, str] = MappingProxyType({"amd64": "q35", "arm64": "virt",
                                                             "s390x": "s390-ccw-virtio"})


@dataclass(frozen=True)
class ClusterSettings:
    architecture: str = "amd64"  # the KubeVirt CR's status.defaultArchitecture
    machine_type: str = "q35"  # GetMachineType for amd64 (and every architecture without its own)
    default_network_binding: str = "bridge"  # bridge | masquerade (slirp is refused, as upstream)
    permit_bridge_on_pod_network: bool = True
    eviction_strategy: str | None = "None"
    cpu_request: str = "100m"
    memory_overcommit: int = 100
    machine_types: Mapping[str, str] = field(default_factory=lambda: DEFAULT_MACHINE_TYPES)
    # The whole merged KubeVirtConfiguration (JSON shape, defaults filled in, read-only by convention):
    # what the domain XML reads (SMBIOS, memBalloonStatsPeriod, cpuModel, liveUpdateConfiguration, ...).
    # Empty means upstream's defaults (`instancetype_webhook.kubevirt.configuration.DEFAULT_CONFIGURATION`).
    configuration: Mapping[str, Any] = field(default_factory=dict, repr=False)
    # Where the settings come from, for logs and /metrics: "defaults" or "KubeVirt <ns>/<name>".
    origin: str = "defaults"
    generation: int = 0  # metadata.generation of that KubeVirt CR (0: defaults)
    resource_version: str = ""
    # The KubeVirt release answered as (kubevirt.releases): code asks `settings.release.has(CHANGE)`.
    release: ReleaseProfile = MAIN_PROFILE

    def machine_type_for(self, architecture: str) -> str:
        """virt-config GetMachineType(arch): arm64 and s390x have their own, anything else gets amd64's."""
        arch = architecture or self.architecture
        if arch in ("arm64", "s390x"):
            return self.machine_types.get(arch, "")
        return self.machine_type


DEFAULT_SETTINGS = ClusterSettings()
