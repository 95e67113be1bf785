"""The spread-topology divisibility check of VM admission (spec 3.3).

The topology readings (effective topology, spread ratio and across) come from `kubevirt.preference.topology`,
shared with the expansion.

Specs are plain dicts (the JSON form of VirtualMachineInstancetypeSpec / VirtualMachinePreferenceSpec);
`None` means "not referenced / not found".
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from instancetype_webhook.kubevirt.causes import FIELD_VALUE_INVALID, Cause
from instancetype_webhook.kubevirt.preference.topology import (
    ACROSS_CORES_THREADS,
    ACROSS_SOCKETS_CORES,
    ACROSS_SOCKETS_CORES_THREADS,
    SPREAD,
    THREADS_PER_CORE,
    preferred_topology,
    spread_options,
)

UINT32: Final = 0xFFFFFFFF

INSTANCETYPE_CPU_GUEST_PATH: Final = "instancetype.spec.cpu.guest"
SOCKETS_CORES_MSG: Final = (
    "{n} vCPUs provided by the instance type are not divisible by the "
    "Spec.PreferSpreadSocketToCoreRatio or Spec.CPU.PreferSpreadOptions.Ratio of {ratio} provided by the preference"
)
CORES_THREADS_MSG: Final = (
    "{n} vCPUs provided by the instance type are not divisible by the number of threads per core {ratio}")
SOCKETS_CORES_THREADS_MSG: Final = (
    "{n} vCPUs provided by the instance type are not divisible by the number of threads per core "
    "{threads} and Spec.PreferSpreadSocketToCoreRatio or Spec.CPU.PreferSpreadOptions.Ratio of {ratio}"
)
# Hardening (spec 2.4): upstream divides by a ratio of 0 and panics; we reject instead.
ZERO_RATIO_MSG: Final = (
    "{n} vCPUs provided by the instance type cannot be spread with the "
    "Spec.PreferSpreadSocketToCoreRatio or Spec.CPU.PreferSpreadOptions.Ratio of 0 provided by the preference"
)


def _cpu(spec: Mapping[str, Any] | None) -> Mapping[str, Any]:
    cpu = (spec or {}).get("cpu")
    return cpu if isinstance(cpu, dict) else {}


def uint32(value: Any) -> int:
    """A uint32 field as Go reads it: absent/null/garbage is 0."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    return int(value) & UINT32


def instancetype_guest_cpus(instancetype: Mapping[str, Any] | None) -> int:
    return uint32(_cpu(instancetype).get("guest"))


def check_spread(instancetype: Mapping[str, Any] | None, preference: Mapping[str, Any] | None) -> Cause | None:
    """The one cause upstream returns when the instance type's vCPUs cannot be spread as the preference asks."""
    if instancetype is None or preferred_topology(preference) != SPREAD:
        return None
    n = instancetype_guest_cpus(instancetype)
    ratio, across = spread_options(preference)
    if across not in (ACROSS_SOCKETS_CORES, ACROSS_CORES_THREADS, ACROSS_SOCKETS_CORES_THREADS):
        return None
    if ratio == 0:
        return Cause(FIELD_VALUE_INVALID, ZERO_RATIO_MSG.format(n=n), INSTANCETYPE_CPU_GUEST_PATH)
    if across == ACROSS_SOCKETS_CORES and n % ratio:
        message = SOCKETS_CORES_MSG.format(n=n, ratio=ratio)
    elif across == ACROSS_CORES_THREADS and n % ratio:
        message = CORES_THREADS_MSG.format(n=n, ratio=ratio)
    elif across == ACROSS_SOCKETS_CORES_THREADS and (n % THREADS_PER_CORE or (n // THREADS_PER_CORE) % ratio):
        message = SOCKETS_CORES_THREADS_MSG.format(n=n, threads=THREADS_PER_CORE, ratio=ratio)
    else:
        return None
    return Cause(FIELD_VALUE_INVALID, message, INSTANCETYPE_CPU_GUEST_PATH)
