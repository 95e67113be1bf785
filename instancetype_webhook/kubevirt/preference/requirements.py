"""Preference `requirements` (cpu, memory, architecture) checked at VM admission (spec 3.4).

The check runs on the VMI spec of the VM template *after* the instance type and preference were applied
and VMI defaults were set. Order: CPU, memory, architecture; only the first failure is reported, as one
cause of type FieldValueNotFound whose `field` is the offending paths joined with ", ".
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from instancetype_webhook.kubevirt.causes import Cause
from instancetype_webhook.kubevirt.preference.topology import (
    ACROSS_CORES_THREADS,
    ACROSS_SOCKETS_CORES,
    ACROSS_SOCKETS_CORES_THREADS,
    ANY,
    CORES,
    SOCKETS,
    SPREAD,
    THREADS,
    preferred_topology,
    spread_options,
)
from instancetype_webhook.kubevirt.preference.validation import UINT32, uint32
from instancetype_webhook.kubevirt.quantity import Quantity, parse

FIELD_VALUE_NOT_FOUND: Final = "FieldValueNotFound"
MESSAGE_PREFIX: Final = "failure checking preference requirements: "
INSTANCETYPE_PATH: Final = "spec.instancetype"
CPU_PATH: Final = "spec.template.spec.domain.cpu"
MEMORY_PATH: Final = "spec.template.spec.domain.memory"
ARCHITECTURE_PATH: Final = "spec.template.spec.architecture"

INSTANCETYPE_CPU_MSG: Final = ("insufficient CPU resources of {have} vCPU provided by instance type, "
                               "preference requires {need} vCPU")
VM_CPU_MSG: Final = ("insufficient CPU resources of {have} vCPU provided by VirtualMachine, "
                     "preference requires {need} vCPU provided as {how}")
NO_VM_CPU_MSG: Final = "no CPU resources provided by VirtualMachine, preference requires {need} vCPU"
INSTANCETYPE_MEMORY_MSG: Final = ("insufficient Memory resources of {have} provided by instance type, "
                                  "preference requires {need}")
VM_MEMORY_MSG: Final = "insufficient Memory resources of {have} provided by VirtualMachine, preference requires {need}"
ARCHITECTURE_MSG: Final = "preference requires architecture {need} but {have} is being requested"

# Which topology counts are multiplied (and reported) for each way of providing vCPUs.
_SINGLE: Final[dict[str, tuple[str, ...]]] = {SOCKETS: ("sockets",), CORES: ("cores",), THREADS: ("threads",)}
_ANY: Final[tuple[str, ...]] = ("cores", "sockets", "threads")
_SPREAD: Final[dict[str, tuple[str, ...]]] = {
    ACROSS_SOCKETS_CORES: ("sockets", "cores"),
    ACROSS_CORES_THREADS: ("cores", "threads"),
    ACROSS_SOCKETS_CORES_THREADS: ("sockets", "cores", "threads"),
}


@dataclass(frozen=True)
class Shortfall:
    """One failed requirement: the offending paths and upstream's error text."""

    paths: tuple[str, ...]
    error: str

    def to_cause(self) -> Cause:
        return Cause(FIELD_VALUE_NOT_FOUND, MESSAGE_PREFIX + self.error, ", ".join(self.paths))


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _quantity(value: Any) -> Quantity:
    """A quantity field; absent or null is Go's zero Quantity."""
    return Quantity.of(0) if value is None else parse(value)


def _product(cpu: Mapping[str, Any], names: tuple[str, ...]) -> int:
    total = 1
    for name in names:
        total = (total * uint32(cpu.get(name))) & UINT32
    return total


def _check_vm_cpu(preference: Mapping[str, Any], need: int, vmi_spec: Mapping[str, Any]) -> Shortfall | None:
    cpu = _mapping(vmi_spec.get("domain")).get("cpu")
    if not isinstance(cpu, dict):
        return Shortfall((CPU_PATH,), NO_VM_CPU_MSG.format(need=need))
    topology = preferred_topology(preference)
    if topology in _SINGLE:
        names, how = _SINGLE[topology], topology
    elif topology == ANY:
        names, how = _ANY, "cores, sockets and threads"
    elif topology == SPREAD:
        _, across = spread_options(preference)
        names, how = _SPREAD.get(across, ()), across
    else:
        return None
    have = _product(cpu, names) if names else 0
    if have < need:
        return Shortfall(tuple(f"{CPU_PATH}.{name}" for name in names),
                         VM_CPU_MSG.format(have=have, need=need, how=how))
    return None


def check_cpu(instancetype: Mapping[str, Any] | None, preference: Mapping[str, Any],
              vmi_spec: Mapping[str, Any]) -> Shortfall | None:
    need = uint32(_mapping(_mapping(preference.get("requirements")).get("cpu")).get("guest"))
    if instancetype is not None:
        have = uint32(_mapping(instancetype.get("cpu")).get("guest"))
        if have < need:
            return Shortfall((INSTANCETYPE_PATH,), INSTANCETYPE_CPU_MSG.format(have=have, need=need))
        return None
    return _check_vm_cpu(preference, need, vmi_spec)


def check_memory(
    instancetype: Mapping[str, Any] | None, preference: Mapping[str, Any], vmi_spec: Mapping[str, Any]
) -> Shortfall | None:
    need = _quantity(_mapping(_mapping(preference.get("requirements")).get("memory")).get("guest"))
    if instancetype is not None:
        have = _quantity(_mapping(instancetype.get("memory")).get("guest"))
        if have < need:
            return Shortfall((INSTANCETYPE_PATH,), INSTANCETYPE_MEMORY_MSG.format(have=have, need=need))
        return None
    memory = _mapping(vmi_spec.get("domain")).get("memory")
    if not isinstance(memory, dict):
        return None
    have = _quantity(memory.get("guest"))
    if have < need:
        return Shortfall((MEMORY_PATH,), VM_MEMORY_MSG.format(have=have, need=need))
    return None


def check_architecture(preference: Mapping[str, Any], vmi_spec: Mapping[str, Any]) -> Shortfall | None:
    need = _mapping(preference.get("requirements")).get("architecture")
    have = vmi_spec.get("architecture") or ""
    if have != need:
        return Shortfall((ARCHITECTURE_PATH,), ARCHITECTURE_MSG.format(need=need, have=have))
    return None


def check_requirements(
    instancetype: Mapping[str, Any] | None, preference: Mapping[str, Any] | None, vmi_spec: Mapping[str, Any]
) -> Cause | None:
    """The cause upstream rejects with, or None when every requirement of the preference is met.

    `instancetype` is the found instance type spec (None when not referenced or not found); `vmi_spec` is
    the VM's `spec.template.spec` after applying and defaulting. Raises QuantityError on a bad quantity.
    """
    if preference is None:
        return None
    requirements = _mapping(preference.get("requirements"))
    if requirements.get("cpu") is not None and (shortfall := check_cpu(instancetype, preference, vmi_spec)) is not None:
        return shortfall.to_cause()
    if (requirements.get("memory") is not None
            and (shortfall := check_memory(instancetype, preference, vmi_spec)) is not None):
        return shortfall.to_cause()
    if (requirements.get("architecture") is not None
            and (shortfall := check_architecture(preference, vmi_spec)) is not None):
        return shortfall.to_cause()
    return None
