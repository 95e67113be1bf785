"""CPU topology from `cpu.guest` and the preference (upstream `apply/cpu.go` applyGuestCPUTopology and
`preference/apply/cpu.go` GetPreferredTopology / GetSpreadOptions). Shared with the spread and
requirements checks."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

SOCKETS: Final = "sockets"
CORES: Final = "cores"
THREADS: Final = "threads"
SPREAD: Final = "spread"
ANY: Final = "any"
DEPRECATED_TOPOLOGIES: Final = {
    "preferSockets": SOCKETS,
    "preferCores": CORES,
    "preferThreads": THREADS,
    "preferSpread": SPREAD,
    "preferAny": ANY,
}
TOPOLOGIES: Final[tuple[str, ...]] = (SOCKETS, CORES, THREADS, SPREAD, ANY)
ACROSS_SOCKETS_CORES: Final = "SocketsCores"
ACROSS_CORES_THREADS: Final = "CoresThreads"
ACROSS_SOCKETS_CORES_THREADS: Final = "SocketsCoresThreads"
DEFAULT_SPREAD_RATIO: Final = 2
THREADS_PER_CORE: Final = 2


def preferred_topology(preference: Mapping[str, Any] | None) -> str:
    """The effective topology (deprecated aliases normalised); `sockets` when none is given."""
    topology = ((preference or {}).get("cpu") or {}).get("preferredCPUTopology") or SOCKETS
    return DEPRECATED_TOPOLOGIES.get(topology, topology)


def spread_options(preference: Mapping[str, Any] | None) -> tuple[int, str]:
    """(ratio, across): ratio 2, else preferSpreadSocketToCoreRatio, else spreadOptions.ratio (even 0)."""
    preference = preference or {}
    ratio = preference.get("preferSpreadSocketToCoreRatio") or DEFAULT_SPREAD_RATIO
    across = ACROSS_SOCKETS_CORES
    options = (preference.get("cpu") or {}).get("spreadOptions")
    if options is not None:
        if options.get("across") is not None:
            across = options["across"]
        if options.get("ratio") is not None:
            ratio = options["ratio"]
    return int(ratio), across


def guest_topology(vcpus: int, preference: dict[str, Any] | None) -> tuple[int, int, int]:
    """(sockets, cores, threads) for `vcpus` under the preference; integer division as upstream.

    A zero spread ratio (which upstream would divide by) yields zero sockets/cores instead of a crash.
    """
    sockets = cores = threads = 1
    if vcpus == 1:
        return sockets, cores, threads
    topology = preferred_topology(preference)
    if topology in (SOCKETS, ANY):
        sockets = vcpus
    elif topology == CORES:
        cores = vcpus
    elif topology == THREADS:
        threads = vcpus
    elif topology == SPREAD:
        ratio, across = spread_options(preference)
        if across == ACROSS_SOCKETS_CORES:
            cores, sockets = ratio, _div(vcpus, ratio)
        elif across == ACROSS_CORES_THREADS:
            threads, cores = ratio, _div(vcpus, ratio)
        elif across == ACROSS_SOCKETS_CORES_THREADS:
            threads, cores, sockets = THREADS_PER_CORE, ratio, _div(vcpus // THREADS_PER_CORE, ratio)
    return sockets, cores, threads


def _div(a: int, b: int) -> int:
    return a // b if b else 0
