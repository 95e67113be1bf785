"""virt-api's hotplug maxima (setupCPUHotplug / setupMemoryHotplug) and ValidateLiveUpdateMemory."""
from __future__ import annotations

import pytest

from instancetype_webhook.kubevirt.configuration import DEFAULT_CONFIGURATION
from instancetype_webhook.kubevirt.liveupdate.hotplug import (
    default_max_guest,
    default_max_sockets,
    hotplug_ratio,
    is_live_update,
    validate_live_update_memory,
    vcpus,
)


def config(**live: object) -> dict:
    return {**DEFAULT_CONFIGURATION, "liveUpdateConfiguration": live}


@pytest.mark.parametrize("cpu, cfg, expected", [
    ({"sockets": 2, "cores": 1, "threads": 1}, config(maxHotplugRatio=4), 8),
    ({"sockets": 2, "cores": 1, "threads": 1}, config(), 8),  # ratio unset: 4
    ({"sockets": 2, "cores": 1, "threads": 1}, config(maxHotplugRatio=2), 4),
    ({"sockets": 3, "cores": 1, "threads": 1}, config(maxCpuSockets=2), 3),  # raised to sockets
    ({"sockets": 2, "cores": 1, "threads": 1}, config(maxCpuSockets=10, maxHotplugRatio=2), 10),
    ({"sockets": 4, "cores": 64, "threads": 1}, config(), 8),  # 16 x 64 > 512: 512 / 64
    ({"sockets": 1, "maxSockets": 6}, config(), 6),  # explicit wins
])
def test_max_sockets(cpu: dict, cfg: dict, expected: int) -> None:
    assert default_max_sockets(cpu, cfg) == expected


def test_max_guest_is_the_ratio_or_the_cluster_value_and_none_when_hotplug_is_impossible() -> None:
    spec = {"architecture": "amd64", "domain": {"memory": {"guest": "2Gi"}}}
    assert default_max_guest(spec, config()) == "8Gi"
    assert default_max_guest(spec, config(maxGuest="16Gi")) == "16Gi"
    assert default_max_guest(spec, config(maxGuest="1Gi")) is None  # below the guest
    assert default_max_guest({**spec, "architecture": "arm64"}, config()) is None
    assert default_max_guest({"architecture": "amd64", "domain": {"memory": {"guest": "512Mi"}}}, config()) is None


@pytest.mark.parametrize("domain, arch, error", [
    ({"cpu": {"realtime": {}}, "memory": {"guest": "2Gi"}}, "amd64",
     "Memory hotplug is not compatible with realtime VMs"),
    ({"cpu": {"numa": {"guestMappingPassthrough": {}}}, "memory": {"guest": "2Gi"}}, "amd64",
     "Memory hotplug is not compatible with guest mapping passthrough"),
    ({"launchSecurity": {"sev": {}}, "memory": {"guest": "2Gi"}}, "amd64",
     "Memory hotplug is not compatible with encrypted VMs"),
    ({"memory": {}}, "amd64", "Guest memory must be configured when memory hotplug is enabled"),
    ({"memory": {"guest": "9Gi"}}, "amd64", "Guest memory is greater than the configured maxGuest memory"),
    ({"memory": {"guest": "2049Mi"}}, "amd64", "Guest memory must be 2Mi aligned"),
    ({"memory": {"guest": "3Gi", "hugepages": {"pageSize": "1Gi"}}}, "amd64", None),
    ({"memory": {"guest": "2050Mi", "hugepages": {"pageSize": "1Gi"}}}, "amd64", "Guest memory must be 1Gi aligned"),
    ({"memory": {"guest": "2Gi"}}, "s390x", "Memory hotplug is only available for x86_64 VMs"),
    ({"memory": {"guest": "512Mi"}}, "amd64",
     "Memory hotplug is only available for VMs with at least 1Gi of guest memory"),
])
def test_validate_live_update_memory(domain: dict, arch: str, error: str | None) -> None:
    assert validate_live_update_memory({"architecture": arch, "domain": domain}, "8Gi") == error


def test_max_guest_alignment_and_absence() -> None:
    spec = {"architecture": "amd64", "domain": {"memory": {"guest": "2Gi"}}}
    assert validate_live_update_memory(spec, "8193Mi") == "MaxGuest must be 2Mi aligned"
    assert validate_live_update_memory(spec, None) == \
        "Max guest memory must be configured when memory hotplug is enabled"


def test_vcpus_multiplies_the_set_parts() -> None:
    assert vcpus({"sockets": 2, "cores": 3, "threads": 2}) == 12
    assert vcpus({"cores": 4}) == 4 and vcpus({}) == 0


def test_rollout_strategy_and_hotplug_ratio() -> None:
    assert is_live_update({}) and is_live_update({"vmRolloutStrategy": "LiveUpdate"})
    assert not is_live_update({"vmRolloutStrategy": "Stage"})
    assert hotplug_ratio({}) == 4 and hotplug_ratio({"liveUpdateConfiguration": {"maxHotplugRatio": 0}}) == 4
    assert hotplug_ratio({"liveUpdateConfiguration": {"maxHotplugRatio": 8}}) == 8
    assert hotplug_ratio({"liveUpdateConfiguration": {"maxHotplugRatio": True}}) == 4
