"""Cluster settings the expansion depends on (KubeVirt CR `spec.configuration`); defaults equal upstream's."""
from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

# Upstream's default machine type per architecture (virt-config `architectureConfiguration`).
DEFAULT_MACHINE_TYPES: Mapping[str, str] = MappingProxyType(
    {"amd64": "q35", "arm64": "virt", "s390x": "s390-ccw-virtio", "ppc64le": "pseries"}
)


@dataclass(frozen=True)
class ClusterSettings:
    architecture: str = "amd64"
    machine_type: str = "q35"  # architectureConfiguration.amd64.machineType
    default_network_binding: str = "bridge"  # bridge | masquerade (slirp is refused, as upstream)
    permit_bridge_on_pod_network: bool = True
    eviction_strategy: str | None = "None"
    cpu_request: str = "100m"
    memory_overcommit: int = 100
    machine_types: Mapping[str, str] = field(default_factory=lambda: DEFAULT_MACHINE_TYPES)

    def machine_type_for(self, architecture: str) -> str:
        """GetMachineType(arch): the machine type configured for `arch` (empty for an unknown one)."""
        arch = architecture or self.architecture
        if arch == "amd64":
            return self.machine_type
        return self.machine_types.get(arch, "")


DEFAULT_SETTINGS = ClusterSettings()
