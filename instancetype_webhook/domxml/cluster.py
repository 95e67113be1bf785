"""The parts of the KubeVirt CR's `spec.configuration` that shape a domain: virt-api's VMI create defaults
(CPU model, live-update maxima, rollout strategy, plus what ClusterSettings holds: default architecture,
machine types, network binding, cpuRequest) and what virt-handler/virt-controller hand the launcher
(SMBIOS, memballoon stats period, virtualMachineOptions, the OVMF path of each architecture).

The configuration is the merged one that `kubevirt.configuration` puts into ClusterSettings (virt-api's
merge onto its defaults, validation, fallback to the last valid one), so the webhook, the CLI and the
conformance runner read the same values: `domain_config_from_settings(settings)`, or
`domain_config(spec.configuration | KubeVirt CR)` for both steps at once.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Final

from instancetype_webhook.domxml.arch import DEFAULT_OVMF_PATHS
from instancetype_webhook.domxml.context import LauncherContext, SMBios
from instancetype_webhook.kubevirt.configuration import (
    DEFAULT_SETTINGS,
    ClusterSettings,
    release_defaults,
    settings_from_configuration,
)
from instancetype_webhook.kubevirt.releases import NUMA_DISTANCES

DEFAULT_MAX_HOTPLUG_RATIO: Final = 4
SMBIOS_FIELDS: Final = ("manufacturer", "family", "product", "sku", "version")


@dataclass(frozen=True)
class DomainConfig:
    settings: ClusterSettings = DEFAULT_SETTINGS
    cpu_model: str = ""
    live_update: bool = True  # vmRolloutStrategy LiveUpdate (the default): CPU and memory hotplug maxima
    max_hotplug_ratio: int = DEFAULT_MAX_HOTPLUG_RATIO
    max_cpu_sockets: int = 0
    max_guest: str | None = None
    smbios: SMBios = field(default_factory=SMBios)
    mem_balloon_stats_period: int = 10
    free_page_reporting_disabled: bool = False
    serial_console_log_disabled: bool = False
    ovmf_paths: Mapping[str, str] = field(default_factory=lambda: DEFAULT_OVMF_PATHS)

    def launcher_context(self, base: LauncherContext | None = None) -> LauncherContext:
        """The converter context virt-launcher gets from this configuration (other facts from ``base``)."""
        return replace(base or LauncherContext(), smbios=self.smbios,
                       mem_balloon_stats_period=self.mem_balloon_stats_period,
                       free_page_reporting=not self.free_page_reporting_disabled,
                       serial_console_log=not self.serial_console_log_disabled, ovmf_dirs=self.ovmf_paths,
                       numa_distances=self.settings.release.has(NUMA_DISTANCES))


DEFAULT_DOMAIN_CONFIG: Final = DomainConfig()


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _int(value: Any, default: int) -> int:
    try:
        return int(value) if value is not None else default
    except (TypeError, ValueError):
        return default


def domain_config(configuration: Mapping[str, Any] | None) -> DomainConfig:
    """A DomainConfig from a KubeVirt CR `spec.configuration` (or a whole CR / spec holding one)."""
    if not configuration:
        return DEFAULT_DOMAIN_CONFIG
    return domain_config_from_settings(settings_from_configuration(dict(configuration)))


def domain_config_from_settings(settings: ClusterSettings) -> DomainConfig:
    """The DomainConfig of the merged configuration ClusterSettings carries (upstream's defaults if none)."""
    if settings is DEFAULT_SETTINGS:
        return DEFAULT_DOMAIN_CONFIG
    config = settings.configuration or release_defaults(settings.release)
    live = _mapping(config.get("liveUpdateConfiguration"))
    smbios_config = _mapping(config.get("smbios"))
    smbios = SMBios(**{name: str(smbios_config.get(name) or "") for name in SMBIOS_FIELDS})
    options = _mapping(config.get("virtualMachineOptions"))
    return DomainConfig(
        settings=settings,
        cpu_model=str(config.get("cpuModel") or ""),
        live_update=config.get("vmRolloutStrategy") in (None, "LiveUpdate"),
        max_hotplug_ratio=_int(live.get("maxHotplugRatio"), DEFAULT_MAX_HOTPLUG_RATIO) or DEFAULT_MAX_HOTPLUG_RATIO,
        max_cpu_sockets=_int(live.get("maxCpuSockets"), 0),
        max_guest=str(live["maxGuest"]) if live.get("maxGuest") is not None else None,
        smbios=smbios,
        mem_balloon_stats_period=_int(config.get("memBalloonStatsPeriod"), 10),
        free_page_reporting_disabled=options.get("disableFreePageReporting") is not None,
        serial_console_log_disabled=options.get("disableSerialConsoleLog") is not None,
        ovmf_paths=_ovmf_paths(config),
    )


def _ovmf_paths(config: Mapping[str, Any]) -> Mapping[str, str]:
    """GetOVMFPath(arch) for each architecture: the deprecated top-level ovmfPath wins for all of them."""
    paths = dict(DEFAULT_OVMF_PATHS)
    arch_config = _mapping(config.get("architectureConfiguration"))
    for arch in paths:
        value = _mapping(arch_config.get(arch)).get("ovmfPath")
        if value:
            paths[arch] = str(value)
    if config.get("ovmfPath"):
        paths = {arch: str(config["ovmfPath"]) for arch in paths}
    return MappingProxyType(paths)
