"""The cluster configuration: a KubeVirt CR's `spec.configuration` turned into `ClusterSettings`, in one place.

Everything the configuration does not set keeps KubeVirt's default, as virt-api merges it.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from app.kubevirt.settings import DEFAULT_SETTINGS, ClusterSettings

__all__ = ["settings_from_configuration"]


def settings_from_configuration(configuration: dict[str, Any] | None) -> ClusterSettings:
    """ClusterSettings from a KubeVirt CR `spec.configuration` (or a whole CR / spec holding one).

    Only the keys the expansion depends on are read; anything absent keeps upstream's default.
    """
    config = configuration or {}
    config = (config.get("spec") or config).get("configuration") or config.get("spec") or config
    if not config:
        return DEFAULT_SETTINGS
    changes: dict[str, Any] = {}
    arch_config = config.get("architectureConfiguration") or {}
    if arch_config.get("defaultArchitecture"):
        changes["architecture"] = arch_config["defaultArchitecture"]
    machine_types = dict(DEFAULT_SETTINGS.machine_types)
    for arch, values in arch_config.items():
        if isinstance(values, dict) and values.get("machineType"):
            machine_types[arch] = values["machineType"]
    changes["machine_types"] = machine_types
    changes["machine_type"] = machine_types.get("amd64", DEFAULT_SETTINGS.machine_type)
    network = config.get("network") or {}
    if network.get("defaultNetworkInterface"):
        changes["default_network_binding"] = network["defaultNetworkInterface"]
    if network.get("permitBridgeInterfaceOnPodNetwork") is not None:
        changes["permit_bridge_on_pod_network"] = bool(network["permitBridgeInterfaceOnPodNetwork"])
    if config.get("evictionStrategy"):
        changes["eviction_strategy"] = config["evictionStrategy"]
    if config.get("cpuRequest") is not None:
        changes["cpu_request"] = str(config["cpuRequest"])
    overcommit = (config.get("developerConfiguration") or {}).get("memoryOvercommit")
    if overcommit is not None:
        changes["memory_overcommit"] = int(overcommit)
    return replace(DEFAULT_SETTINGS, **changes)
