"""The cluster configuration: `ClusterSettings` (what expansion, validation and the domain read of it; the
defaults equal upstream's on an amd64 cluster) and a KubeVirt CR turned into them, as virt-api's virt-config does it.

Upstream (pkg/virt-config): the configuration in use is KubeVirt's default configuration with the CR's
`spec.configuration` unmarshalled over it, Go style: objects (structs and maps) merge key by key, lists and
scalars replace, and what Go's encoder omits never overrides a default (null, and the zero value of a
non-pointer `omitempty` field: `memoryOvercommit: 0`, `machineType: ""`, empty lists and maps).
`architectureConfiguration.defaultArchitecture` is then always taken from the CR's
`status.defaultArchitecture`, which virt-operator writes: the spec's `defaultArchitecture` when set, else
its own architecture (amd64 here). The merged configuration is validated (`configuration_error`); an
invalid one is not used: virt-api keeps its last valid configuration (the defaults at start).
A CR is used only once virt-operator has given it a `status.phase` and while it is not being deleted.

    merge_configuration(spec_configuration) -> dict          the merged KubeVirtConfiguration
    configuration_error(merged) -> str | None               virt-config's validateConfig text
    settings_from_configuration(config, fallback) -> ClusterSettings
    settings_from_kubevirt(kubevirt, fallback) -> ClusterSettings
    usable_kubevirt(objects) -> the CR virt-api would read, or None
"""
from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Final

from instancetype_webhook.kubevirt.quantity import QuantityError, parse
from instancetype_webhook.kubevirt.releases import MAIN_PROFILE, ReleaseProfile

__all__ = [
    "DEFAULT_MACHINE_TYPES",
    "DEFAULT_SETTINGS",
    "ClusterSettings",
    "DEFAULT_CONFIGURATION",
    "ConfigurationError",
    "configuration_error",
    "default_architecture",
    "merge_configuration",
    "settings_from_configuration",
    "release_defaults",
    "settings_from_kubevirt",
    "with_release",
    "usable_kubevirt",
]


# Upstream's default machine type per architecture (virt-config `architectureConfiguration`).
DEFAULT_MACHINE_TYPES: Final[Mapping[str, str]] = MappingProxyType({"amd64": "q35", "arm64": "virt",
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


DEFAULT_SETTINGS: Final = ClusterSettings()

_RATE: Final = {"restClient": {"rateLimiter": {"tokenBucketRateLimiter": {"qps": 200, "burst": 400}}}}

# virt-config defaultClusterConfig("amd64"), in the CR's JSON shape.
DEFAULT_CONFIGURATION: Final[dict[str, Any]] = {
    "imagePullPolicy": "IfNotPresent",
    "developerConfiguration": {
        "memoryOvercommit": 100,
        "pvcTolerateLessSpaceUpToPercent": 10,
        "minimumReservePVCBytes": 131072,
        "cpuAllocationRatio": 10,
        "diskVerification": {"memoryLimit": "2000Mi"},
        "logVerbosity": {"virtAPI": 2, "virtOperator": 2, "virtController": 2, "virtHandler": 2, "virtLauncher": 2},
    },
    "evictionStrategy": "None",
    "migrations": {
        "parallelMigrationsPerCluster": 5,
        "parallelOutboundMigrationsPerNode": 2,
        "nodeDrainTaintKey": "kubevirt.io/drain",
        "bandwidthPerMigration": "0Mi",
        "progressTimeout": 150,
        "completionTimeoutPerGiB": 150,
        "maxDowntimeMs": 900,
        "utilityVolumesTimeout": 150,
        "unsafeMigrationOverride": False,
        "allowAutoConverge": False,
        "allowPostCopy": False,
    },
    "cpuRequest": "100m",
    "network": {"defaultNetworkInterface": "bridge", "permitSlirpInterface": False,
                "permitBridgeInterfaceOnPodNetwork": True},
    "smbios": {"family": "KubeVirt", "manufacturer": "KubeVirt", "product": "None"},
    "supportedGuestAgentVersions": ["2.*", "3.*", "4.*", "5.*"],
    "memBalloonStatsPeriod": 10,
    "apiConfiguration": _RATE,
    "controllerConfiguration": _RATE,
    "handlerConfiguration": {"restClient": {"rateLimiter": {"tokenBucketRateLimiter": {"qps": 50, "burst": 100}}}},
    "webhookConfiguration": _RATE,
    "architectureConfiguration": {
        "amd64": {"ovmfPath": "/usr/share/edk2/ovmf", "emulatedMachines": ["q35*", "pc-q35*"], "machineType": "q35"},
        "arm64": {"ovmfPath": "/usr/share/AAVMF", "emulatedMachines": ["virt*"], "machineType": "virt"},
        "s390x": {"emulatedMachines": ["s390-ccw-virtio*"], "machineType": "s390-ccw-virtio"},
        "defaultArchitecture": "amd64",
    },
    "liveUpdateConfiguration": {"maxHotplugRatio": 4},
    "vmRolloutStrategy": "LiveUpdate",
    "hypervisors": [{"name": "kvm"}],
}

# Pointer fields (Go `*T`, `omitempty`): their zero value is printed, so it does override the default.
# Every other zero-valued scalar is a non-pointer `omitempty` field that Go's encoder leaves out.
_POINTER_FIELDS: Final = frozenset({
    "cpuRequest", "evictionStrategy", "additionalGuestMemoryOverheadRatio", "memBalloonStatsPeriod",
    "virtualMachineInstancesPerNode", "vmRolloutStrategy", "network.permitSlirpInterface",
    "network.permitBridgeInterfaceOnPodNetwork", "liveUpdateConfiguration.maxCpuSockets",
    "liveUpdateConfiguration.maxGuest", "developerConfiguration.minimumClusterTSCFrequency",
    "mediatedDevicesConfiguration.enabled", "instancetype.referencePolicy", "commonInstancetypesDeployment.enabled",
    "virtTemplateDeployment.enabled", "persistentReservationConfiguration.enabled",
})
_POINTER_PREFIXES: Final = ("migrations.", "virtualMachineOptions.", "confidentialCompute.")
_PULL_POLICIES: Final = ("", "Always", "Never", "IfNotPresent")
_NETWORK_INTERFACES: Final = ("", "bridge", "slirp", "masquerade")


class ConfigurationError(ValueError):
    """A KubeVirt configuration virt-config would refuse (and keep its last valid one instead)."""


def _is_pointer(path: str) -> bool:
    return path in _POINTER_FIELDS or path.startswith(_POINTER_PREFIXES)


def _omitted(value: Any, path: str) -> bool:
    """Whether Go's encoder leaves this value out of the re-marshalled spec.configuration."""
    if value is None:
        return True
    if isinstance(value, list):
        return not value  # every list of the configuration is `omitempty`
    if isinstance(value, (str, bool, int, float)):
        return not value and not _is_pointer(path)
    return False


def _merge(into: dict[str, Any], overrides: Mapping[str, Any], prefix: str = "") -> None:
    for key, value in overrides.items():
        path = f"{prefix}{key}"
        if _omitted(value, path):
            continue
        current = into.get(key)
        if isinstance(value, Mapping) and isinstance(current, dict):
            _merge(current, value, f"{path}.")
        elif isinstance(value, Mapping):
            into[key] = {}
            _merge(into[key], value, f"{path}.")
        else:
            into[key] = copy.deepcopy(value)


def release_defaults(release: ReleaseProfile = MAIN_PROFILE) -> dict[str, Any]:
    """`release`'s default configuration (a new dict): main's, with the amd64 firmware directory of the release."""
    merged = copy.deepcopy(DEFAULT_CONFIGURATION)
    merged["architectureConfiguration"]["amd64"]["ovmfPath"] = release.amd64_ovmf_path
    return merged


def merge_configuration(spec_configuration: Mapping[str, Any] | None,
                        release: ReleaseProfile = MAIN_PROFILE) -> dict[str, Any]:
    """`release`'s default configuration with `spec_configuration` unmarshalled over it (a new dict)."""
    merged = release_defaults(release)
    if spec_configuration:
        if not isinstance(spec_configuration, Mapping):
            raise ConfigurationError("spec.configuration is not an object")
        _merge(merged, spec_configuration)
    return merged


def _section(config: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = config.get(key)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigurationError(f"cannot decode {key}: not an object")
    return value


def _typed(value: Any, kind: type | tuple[type, ...], what: str) -> Any:
    if isinstance(value, bool) and kind is int or not isinstance(value, kind):
        raise ConfigurationError(f"cannot decode {what}: {value!r}")
    return value


def configuration_error(merged: Mapping[str, Any]) -> str | None:
    """virt-config's validateConfig on a merged configuration (plus the decoding of what we read), or None."""
    try:
        _validate(merged)
    except ConfigurationError as exc:
        return str(exc)
    return None


def _validate(config: Mapping[str, Any]) -> None:
    policy = _typed(config.get("imagePullPolicy", ""), str, "imagePullPolicy")
    if policy not in _PULL_POLICIES:
        raise ConfigurationError(f"invalid dev.imagePullPolicy in config: {policy}")
    developer = _section(config, "developerConfiguration")
    overcommit = _typed(developer.get("memoryOvercommit", 0), int, "developerConfiguration.memoryOvercommit")
    if overcommit <= 0:
        raise ConfigurationError(f"invalid memoryOvercommit in ConfigMap: {overcommit}")
    ratio = _typed(developer.get("cpuAllocationRatio", 0), int, "developerConfiguration.cpuAllocationRatio")
    if ratio <= 0:
        raise ConfigurationError(f"invalid cpu allocation ratio in ConfigMap: {ratio}")
    toleration = _typed(developer.get("pvcTolerateLessSpaceUpToPercent", 0), int,
                        "developerConfiguration.pvcTolerateLessSpaceUpToPercent")
    if toleration < 0 or toleration > 100:
        raise ConfigurationError(f"invalid lessPVCSpaceToleration in ConfigMap: {toleration}")
    network = _section(config, "network")
    interface = _typed(network.get("defaultNetworkInterface", ""), str, "network.defaultNetworkInterface")
    if interface not in _NETWORK_INTERFACES:
        raise ConfigurationError(f"invalid default-network-interface in config: {interface}")
    _typed(network.get("permitBridgeInterfaceOnPodNetwork", True), bool, "network.permitBridgeInterfaceOnPodNetwork")
    _typed(config.get("evictionStrategy", ""), str, "evictionStrategy")
    _typed(config.get("machineType", ""), str, "machineType")
    cpu_request = _typed(config.get("cpuRequest", "100m"), (str, int, float), "cpuRequest")
    try:
        parse(cpu_request)
    except QuantityError as exc:
        raise ConfigurationError(f"cannot decode cpuRequest: {exc}") from None
    arch = _section(config, "architectureConfiguration")
    for name in ("amd64", "arm64", "s390x"):
        _typed(_section(arch, name).get("machineType", ""), str, f"architectureConfiguration.{name}.machineType")


def default_architecture(kubevirt: Mapping[str, Any] | None, spec_configuration: Mapping[str, Any] | None) -> str:
    """status.defaultArchitecture, or what virt-operator writes there: the spec's, else amd64."""
    status = (kubevirt or {}).get("status")
    found = status.get("defaultArchitecture") if isinstance(status, Mapping) else None
    if isinstance(found, str) and found:
        return found
    if spec_configuration is None and isinstance(kubevirt, Mapping):
        spec_configuration = (kubevirt.get("spec") or {}).get("configuration")
    arch = spec_configuration.get("architectureConfiguration") if isinstance(spec_configuration, Mapping) else None
    found = arch.get("defaultArchitecture") if isinstance(arch, Mapping) else None
    return found if isinstance(found, str) and found else "amd64"


def _machine_type(config: Mapping[str, Any], arch: str) -> str:
    """GetMachineType: the deprecated top-level machineType wins for every architecture."""
    if config.get("machineType"):
        return str(config["machineType"])
    section = (config.get("architectureConfiguration") or {}).get(arch) or {}
    return str(section.get("machineType") or "")


def _settings(merged: dict[str, Any], architecture: str, **origin: Any) -> ClusterSettings:
    merged.setdefault("architectureConfiguration", {})["defaultArchitecture"] = architecture
    network = merged.get("network") or {}
    developer = merged.get("developerConfiguration") or {}
    cpu_request = merged.get("cpuRequest")
    return ClusterSettings(
        architecture=architecture,
        machine_type=_machine_type(merged, "amd64"),
        machine_types={arch: _machine_type(merged, arch) for arch in ("amd64", "arm64", "s390x")},
        default_network_binding=str(network.get("defaultNetworkInterface") or ""),
        permit_bridge_on_pod_network=bool(network.get("permitBridgeInterfaceOnPodNetwork")),
        eviction_strategy=merged.get("evictionStrategy"),
        cpu_request=str(cpu_request) if cpu_request is not None else DEFAULT_SETTINGS.cpu_request,
        memory_overcommit=int(developer.get("memoryOvercommit") or DEFAULT_SETTINGS.memory_overcommit),
        configuration=merged,
        **origin,
    )


def _spec_configuration(config: Mapping[str, Any]) -> tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]:
    """(the KubeVirt CR if `config` is one, its spec.configuration) for a CR, a KubeVirtSpec or a configuration."""
    if (config.get("kind") == "KubeVirt" or isinstance(config.get("status"), Mapping)
            or isinstance(config.get("spec"), Mapping)):
        spec = found if isinstance(found := config.get("spec"), Mapping) else {}
        return config, spec.get("configuration") or {}
    if isinstance(config.get("configuration"), Mapping):
        return None, config["configuration"]
    return None, config


def settings_from_configuration(
    configuration: Mapping[str, Any] | None, fallback: ClusterSettings = DEFAULT_SETTINGS,
    release: ReleaseProfile | None = None,
) -> ClusterSettings:
    """ClusterSettings from a KubeVirt CR's `spec.configuration` (a whole CR or its spec work too).

    The default architecture follows the README rule for `status.defaultArchitecture` (the CR's status when
    given, else the spec's `defaultArchitecture`, else amd64). An invalid configuration gives `fallback`, as
    virt-api keeps its last valid configuration (`configuration_error` says why). `release` (default: the
    fallback's) is the KubeVirt release answered as: its default configuration is the base of the merge.
    """
    release = release or fallback.release
    if not configuration:
        return fallback if release is fallback.release else with_release(fallback, release)
    kubevirt, spec_configuration = _spec_configuration(configuration)
    if kubevirt is not None:
        return settings_from_kubevirt(kubevirt, fallback, release)
    try:
        merged = merge_configuration(spec_configuration, release)
        _validate(merged)
    except ConfigurationError:
        return with_release(fallback, release)
    return _settings(merged, default_architecture(None, spec_configuration), origin="configuration", release=release)


def with_release(settings: ClusterSettings, release: ReleaseProfile) -> ClusterSettings:
    """`settings` answered as `release` (the release's default configuration when `settings` has none)."""
    if settings.release == release:
        return settings
    if not settings.configuration:
        merged = release_defaults(release)
        return _settings(merged, settings.architecture, origin=settings.origin, release=release)
    return replace(settings, release=release)


def kubevirt_problem(kubevirt: Mapping[str, Any]) -> str | None:
    """Why virt-api would not use this KubeVirt CR's configuration, or None."""
    spec = found if isinstance(found := kubevirt.get("spec"), Mapping) else {}
    try:
        return configuration_error(merge_configuration(spec.get("configuration") or {}))
    except ConfigurationError as exc:
        return str(exc)


def settings_from_kubevirt(kubevirt: Mapping[str, Any], fallback: ClusterSettings = DEFAULT_SETTINGS,
                           release: ReleaseProfile | None = None) -> ClusterSettings:
    """ClusterSettings from a whole KubeVirt CR (its spec.configuration and status.defaultArchitecture),
    answered as `release` (default: the fallback's); `fallback` when the configuration is invalid."""
    release = release or fallback.release
    spec = found if isinstance(found := kubevirt.get("spec"), Mapping) else {}
    spec_configuration = spec.get("configuration") or {}
    meta = found if isinstance(found := kubevirt.get("metadata"), Mapping) else {}
    try:
        merged = merge_configuration(spec_configuration, release)
        _validate(merged)
    except ConfigurationError:
        return with_release(fallback, release)
    where = f"KubeVirt {meta.get('namespace') or ''}/{meta.get('name') or ''}".replace(" /", " ")
    generation = meta.get("generation")
    return _settings(merged, default_architecture(kubevirt, spec_configuration), origin=where,
                     generation=generation if isinstance(generation, int) else 0,
                     resource_version=str(meta.get("resourceVersion") or ""), release=release)


def _created(obj: Mapping[str, Any]) -> tuple[str, str, str]:
    meta = obj.get("metadata") or {}
    return (str(meta.get("creationTimestamp") or ""), str(meta.get("namespace") or ""), str(meta.get("name") or ""))


def usable_kubevirt(objects: Iterable[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The KubeVirt CR virt-api reads: not being deleted and with a `status.phase` (virt-operator has seen it).
    The cluster has one; should there be several, the oldest wins (upstream takes whichever its cache lists last)."""
    usable = [obj for obj in objects if isinstance(obj, Mapping)
              and not (obj.get("metadata") or {}).get("deletionTimestamp")
              and ((obj.get("status") or {}).get("phase") if isinstance(obj.get("status"), Mapping) else None)]
    return min(usable, key=_created) if usable else None
