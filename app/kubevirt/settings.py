"""Cluster settings the expansion depends on (KubeVirt CR `spec.configuration`); defaults equal upstream's."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ClusterSettings:
    architecture: str = "amd64"
    machine_type: str = "q35"
    default_network_binding: str = "bridge"
    eviction_strategy: str = "None"
    cpu_request: str = "100m"
    memory_overcommit: int = 100


DEFAULT_SETTINGS = ClusterSettings()
