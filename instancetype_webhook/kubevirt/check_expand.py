"""One pass over a VM for the mutating webhook: the validating verdict and the expansion together.

    check_and_expand(vm, source, settings=DEFAULT_SETTINGS) -> Checked(verdict, flat, error)

gives exactly what the two separate calls give:

    verdict = validate_vm(vm, source, settings)
    try: flat, error = expand(vm, source, settings), None
    except ExpandError as exc: flat, error = None, exc

but looks up the instance type and preference once and applies them once. What is shared, and why
the answers cannot differ:

- the lookups: both resolve the same matchers against the same source; validation ignores a failed
  lookup (a warning), expansion fails with the first error in matcher order;
- the instance type's conflicts: none of them reads the disks, interfaces or networks that expansion
  adds before applying (and validation only adds after), so both find the same conflicts;
- the preference requirements: they read only `domain.cpu`, `domain.memory` and `architecture` of
  the defaulted VMI spec, which the default disks and pod interface do not touch, so the check runs
  on the expansion's defaulted template instead of a second copy.

Anything off the common path (a shape or schema error, no matcher, a deletion in progress, and any
exception while applying, defaulting or checking) is answered by the two separate calls, so the
answer is the same there by construction.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from instancetype_webhook.kubevirt.apply import conflicts_error
from instancetype_webhook.kubevirt.causes import ExpandError, Verdict
from instancetype_webhook.kubevirt.configuration import DEFAULT_SETTINGS, ClusterSettings
from instancetype_webhook.kubevirt.expand import (
    _template_spec,
    apply_specs,
    default_template_spec,
    expand,
    finish_expansion,
    has_references,
    schema_error,
    shape_problem,
)
from instancetype_webhook.kubevirt.find import find_instancetype_spec, find_preference_spec
from instancetype_webhook.kubevirt.preference.requirements import check_requirements
from instancetype_webhook.kubevirt.preference.validation import check_spread
from instancetype_webhook.kubevirt.rejection import reject
from instancetype_webhook.kubevirt.releases import ReleaseProfile
from instancetype_webhook.kubevirt.source import Source
from instancetype_webhook.kubevirt.vm_webhook import (
    _shape_error,
    ignored_lookup_warning,
    validate_vm,
    verdict_for_specs,
)

__all__ = ["Checked", "check_and_expand", "two_calls"]

Spec = dict[str, Any]


class Checked(NamedTuple):
    """The validating verdict, and the flat VM or the error expansion failed with (exactly one is set)."""

    verdict: Verdict
    flat: dict[str, Any] | None
    error: ExpandError | None


class _OffPath(Exception):
    """The one-pass path does not cover this VM: answer with the two separate calls."""


def two_calls(vm: dict[str, Any], source: Source, settings: ClusterSettings = DEFAULT_SETTINGS) -> Checked:
    """The reference answer: validate_vm, then expand."""
    verdict = validate_vm(vm, source, settings)
    try:
        return Checked(verdict, expand(vm, source, settings), None)
    except ExpandError as exc:
        return Checked(verdict, None, exc)


def check_and_expand(vm: dict[str, Any], source: Source, settings: ClusterSettings = DEFAULT_SETTINGS) -> Checked:
    if not _on_path(vm):
        return two_calls(vm, source, settings)
    try:
        return _one_pass(vm, source, settings)
    except _OffPath:
        return two_calls(vm, source, settings)


def _on_path(vm: Any) -> bool:
    return (
        _shape_error(vm) is None
        and shape_problem(vm) is None
        and schema_error(vm) is None
        and has_references(vm)
        and not (vm.get("metadata") or {}).get("deletionTimestamp")
    )


def _find(vm: dict[str, Any], source: Source, find: Callable[[dict[str, Any], Source, ReleaseProfile], Spec | None],
          release: ReleaseProfile) -> tuple[Spec | None, ExpandError | None]:
    try:
        return find(vm, source, release), None
    except ExpandError as exc:
        return None, exc
    except Exception as other:  # validate_vm lets it escape, expand turns it into badRequest: not ours to decide
        raise _OffPath from other


def _one_pass(vm: dict[str, Any], source: Source, settings: ClusterSettings) -> Checked:
    instancetype, it_error = _find(vm, source, find_instancetype_spec, settings.release)
    preference, pref_error = _find(vm, source, find_preference_spec, settings.release)
    if it_error is not None or pref_error is not None:
        return _lookup_failed(vm, instancetype, it_error, preference, pref_error, settings)
    try:
        new_vm, causes = apply_specs(vm, instancetype, preference, settings)
        spread = check_spread(instancetype, preference)
        if causes:
            return Checked(reject([spread] if spread is not None else causes), None, conflicts_error(causes))
        default_template_spec(new_vm, settings)
        shortfall = None if spread is not None else check_requirements(instancetype, preference, _template_spec(new_vm))
        finish_expansion(new_vm)
    except Exception as exc:  # validation and expansion word their data errors differently
        raise _OffPath from exc
    if spread is not None:
        return Checked(reject([spread]), new_vm, None)
    return Checked(reject([shortfall]) if shortfall is not None else Verdict.allow(), new_vm, None)


def _lookup_failed(vm: dict[str, Any], instancetype: Spec | None, it_error: ExpandError | None,
                   preference: Spec | None, pref_error: ExpandError | None, settings: ClusterSettings) -> Checked:
    """Expansion fails with the first lookup error; validation ignores it (a warning) and checks the rest."""
    spec = vm.get("spec") or {}
    warnings = []
    if it_error is not None:
        warnings.append(ignored_lookup_warning("instance type", spec.get("instancetype") or {}, it_error))
    if pref_error is not None:
        warnings.append(ignored_lookup_warning("preference", spec.get("preference") or {}, pref_error))
    verdict = verdict_for_specs(vm, instancetype, preference, settings, warnings)
    return Checked(verdict, None, it_error or pref_error)
