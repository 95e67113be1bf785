"""virt-api's VMI create defaults (ApplyNewVMIMutations / SetDefaultVirtualMachineInstance) under a cluster
configuration (instancetype_webhook/domxml/cluster.py; default: an empty configuration on amd64).

The converter assumes these ran; the conformance oracle applies them before converting. They are the same
defaults the live-update planner's running VMI carries: one function,
`instancetype_webhook.kubevirt.liveupdate.vmi_defaults.vmi_create_defaults`, per release and architecture
(amd64 and anything else: SATA disks, an i6300esb watchdog; arm64: virtio disks, UEFI without secure boot,
host-passthrough CPUs, no CPU or memory hotplug; s390x: virtio disks, ACPI off, a diag288 watchdog).
"""
from __future__ import annotations

import copy
from typing import Any

from instancetype_webhook.domxml.cluster import DEFAULT_DOMAIN_CONFIG, DomainConfig
from instancetype_webhook.domxml.errors import DomainError
from instancetype_webhook.kubevirt.causes import ExpandError
from instancetype_webhook.kubevirt.liveupdate.vmi_defaults import DefaultsConfig, vmi_create_defaults


def defaults_config(config: DomainConfig) -> DefaultsConfig:
    """The VMI defaults' view of a DomainConfig (its fields win over the configuration it was made from)."""
    live: dict[str, Any] = {"maxHotplugRatio": config.max_hotplug_ratio, "maxCpuSockets": config.max_cpu_sockets}
    if config.max_guest is not None:
        live["maxGuest"] = config.max_guest
    configuration = {**(config.settings.configuration or {}), "liveUpdateConfiguration": live,
                     "vmRolloutStrategy": "LiveUpdate" if config.live_update else "Stage"}
    return DefaultsConfig(configuration, config.cpu_model)


def apply_vmi_defaults(vmi: dict[str, Any], config: DomainConfig = DEFAULT_DOMAIN_CONFIG) -> dict[str, Any]:
    """A defaulted deep copy of ``vmi``."""
    vmi = copy.deepcopy(vmi)
    vmi.setdefault("spec", {}).setdefault("domain", {})
    try:
        vmi_create_defaults(vmi, config.settings, defaults_config(config))
    except ExpandError as exc:  # the default interface cannot be made under this configuration
        raise DomainError(exc.message) from exc
    return vmi
