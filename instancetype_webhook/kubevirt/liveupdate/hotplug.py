"""CPU and memory hotplug limits of a running VMI, as virt-api's VMI create defaults set them
(pkg/defaults `setupCPUHotplug`, `setupMemoryHotplug`), and `ValidateLiveUpdateMemory`
(pkg/liveupdate/memory) with its exact messages. Errors are values (a message or None)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from instancetype_webhook.kubevirt.quantity import BINARY_SI, Quantity, QuantityError, format_quantity, parse

MAX_VCPUS: Final = 512
ALIGN_2M: Final = 2 * 2**20
ALIGN_1G: Final = 2**30
MIN_GUEST: Final = 2**30
DEFAULT_RATIO: Final = 4


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def live_update_config(configuration: Mapping[str, Any]) -> dict[str, Any]:
    """`liveUpdateConfiguration` of the merged KubeVirt configuration (`{}` when absent)."""
    return _obj(configuration.get("liveUpdateConfiguration"))


def hotplug_ratio(configuration: Mapping[str, Any]) -> int:
    """GetMaxHotplugRatio: the configured ratio, 4 when unset or 0 (the default configuration sets 4)."""
    raw = live_update_config(configuration).get("maxHotplugRatio")
    return raw if isinstance(raw, int) and not isinstance(raw, bool) and raw > 0 else DEFAULT_RATIO


def is_live_update(configuration: Mapping[str, Any]) -> bool:
    """IsVMRolloutStrategyLiveUpdate: unset or LiveUpdate."""
    return configuration.get("vmRolloutStrategy") in (None, "LiveUpdate")


def vcpus(cpu: Mapping[str, Any]) -> int:
    """hardware.GetNumberOfVCPUs: the product of the non-zero sockets, cores and threads."""
    count = 0
    for key in ("cores", "sockets", "threads"):
        value = int(cpu.get(key) or 0)
        if value:
            count = value if count == 0 else count * value
    return count


def default_max_sockets(cpu: Mapping[str, Any], configuration: Mapping[str, Any]) -> int:
    """setupCPUHotplug: an explicit maxSockets, else the cluster's (at least sockets), else the ratio rule."""
    if cpu.get("maxSockets"):
        return int(cpu["maxSockets"])
    sockets, cores, threads = (int(cpu.get(k) or 0) for k in ("sockets", "cores", "threads"))
    cluster = int(live_update_config(configuration).get("maxCpuSockets") or 0)
    if cluster:
        return max(cluster, sockets)
    max_sockets = sockets * hotplug_ratio(configuration)
    if max_sockets * cores * threads > MAX_VCPUS:
        max_sockets = max(MAX_VCPUS // (cores * threads), sockets)
    return max_sockets


def default_max_guest(spec: Mapping[str, Any], configuration: Mapping[str, Any]) -> str | None:
    """setupMemoryHotplug: the value virt-api gives `maxGuest`, or None when hotplug is not possible."""
    memory = _obj(_obj(spec.get("domain")).get("memory"))
    if memory.get("maxGuest") is not None:
        return str(memory["maxGuest"])
    cluster = live_update_config(configuration).get("maxGuest")
    max_guest: str | None = None
    if cluster is not None:
        max_guest = str(cluster)
    elif memory.get("guest") is not None:
        try:
            guest = parse(memory["guest"]).int_value()
        except QuantityError:
            return None
        max_guest = format_quantity(Quantity.of(guest * hotplug_ratio(configuration)).value, BINARY_SI)
    if validate_live_update_memory(spec, max_guest) is not None:
        return None
    return max_guest


def _alignment(memory: Mapping[str, Any]) -> int:
    return ALIGN_1G if _obj(memory.get("hugepages")).get("pageSize") == "1Gi" else ALIGN_2M


def _align_text(alignment: int) -> str:
    return "1Gi" if alignment == ALIGN_1G else "2Mi"


def validate_live_update_memory(spec: Mapping[str, Any], max_guest: Any) -> str | None:
    """ValidateLiveUpdateMemory(vmi spec, maxGuest): the first failing check's message, or None."""
    domain = _obj(spec.get("domain"))
    cpu = _obj(domain.get("cpu"))
    if cpu.get("realtime") is not None:
        return "Memory hotplug is not compatible with realtime VMs"
    if _obj(cpu.get("numa")).get("guestMappingPassthrough") is not None:
        return "Memory hotplug is not compatible with guest mapping passthrough"
    if domain.get("launchSecurity") is not None:
        return "Memory hotplug is not compatible with encrypted VMs"
    memory = _obj(domain.get("memory"))
    alignment = _alignment(memory)
    if memory.get("guest") is None:
        return "Guest memory must be configured when memory hotplug is enabled"
    if max_guest is None:
        return "Max guest memory must be configured when memory hotplug is enabled"
    try:
        guest, maximum = parse(memory["guest"]), parse(max_guest)
    except QuantityError as exc:
        return str(exc)
    if guest > maximum:
        return "Guest memory is greater than the configured maxGuest memory"
    if guest.int_value() % alignment:
        return f"Guest memory must be {_align_text(alignment)} aligned"
    if maximum.int_value() % alignment:
        return f"MaxGuest must be {_align_text(alignment)} aligned"
    if spec.get("architecture") != "amd64":
        return "Memory hotplug is only available for x86_64 VMs"
    if guest.int_value() < MIN_GUEST:
        return "Memory hotplug is only available for VMs with at least 1Gi of guest memory"
    return None
