"""The VM's `spec.instancetype` / `spec.preference` matchers: their validation (spec 3.5) and kind resolution (1.5).

Messages and cause types follow upstream's code (pkg/instancetype/webhooks/vm/mutator.go at the oracle's commit):
`Name already set, should be cleared before setting inferFromVolume` and `Kind already set, ...` are
FieldValueNotSupported causes on `spec.<matcher>.name` / `.kind`.

UPDATE (`old_vm` given): when both the old and the new VM have the matcher and they differ, a new `name` with an
unchanged, non-empty `revisionName` is refused (`the Matcher Name has been updated without updating the
RevisionName`, on `spec.<matcher>.revisionName`). Only the name is compared: kind or policy changes pass, and so
does adding, changing or removing a `revisionName`, or adding or removing a whole matcher.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from instancetype_webhook.kubevirt.causes import FIELD_VALUE_INVALID, FIELD_VALUE_NOT_SUPPORTED, Cause, ExpandError
from instancetype_webhook.kubevirt.find import resolve_kind

FIELD_VALUE_NOT_FOUND: Final = "FieldValueNotFound"
FAILURE_POLICIES: Final[tuple[str, ...]] = ("Ignore", "Reject")


@dataclass(frozen=True)
class MatcherKind:
    """One of the two matchers: its VM field and its Go type name."""

    field: str
    type_name: str
    is_preference: bool


INSTANCETYPE_MATCHER: Final = MatcherKind("instancetype", "InstancetypeMatcher", False)
PREFERENCE_MATCHER: Final = MatcherKind("preference", "PreferenceMatcher", True)
MATCHERS: Final[tuple[MatcherKind, ...]] = (INSTANCETYPE_MATCHER, PREFERENCE_MATCHER)


class UnknownKindError(ValueError):
    """A matcher kind that is none of the accepted resource names (upstream: a 400 Bad Request)."""


def canonical_kind(matcher: MatcherKind, kind: str | None) -> str:
    """The canonical kind a matcher names (`kubevirt.find.resolve_kind`): empty means the cluster kind,
    and matching is case-insensitive against the singular and plural resource names."""
    try:
        return resolve_kind({"kind": kind or ""}, preference=matcher.is_preference)
    except ExpandError as exc:
        raise UnknownKindError(exc.message) from None


def _matcher(vm: Mapping[str, Any] | None, matcher: MatcherKind) -> Mapping[str, Any] | None:
    spec = (vm or {}).get("spec")
    if not isinstance(spec, dict):
        return None
    value = spec.get(matcher.field)
    return value if isinstance(value, dict) else None


def _validate_one(matcher_value: Mapping[str, Any], matcher: MatcherKind) -> list[Cause]:
    base = f"spec.{matcher.field}"
    name, infer = matcher_value.get("name") or "", matcher_value.get("inferFromVolume") or ""
    within = f"within the {matcher.type_name}"
    causes: list[Cause] = []
    if not name and not infer:
        causes.append(Cause(FIELD_VALUE_NOT_FOUND, f"Either Name or InferFromVolume should be provided {within}", base))
    if infer and name:
        causes.append(
            Cause(FIELD_VALUE_NOT_SUPPORTED, "Name already set, should be cleared before setting inferFromVolume",
                  f"{base}.name")
        )
    if infer and matcher_value.get("kind"):
        causes.append(
            Cause(FIELD_VALUE_NOT_SUPPORTED, "Kind already set, should be cleared before setting inferFromVolume",
                  f"{base}.kind")
        )
    policy = matcher_value.get("inferFromVolumeFailurePolicy")
    if policy is not None and policy not in FAILURE_POLICIES:
        causes.append(
            Cause(FIELD_VALUE_INVALID, f"Invalid value '{policy}' for InferFromVolumeFailurePolicy",
                  f"{base}.inferFromVolumeFailurePolicy")
        )
    return causes


def _update_causes(new: Mapping[str, Any], old: Mapping[str, Any], matcher: MatcherKind) -> list[Cause]:
    """UPDATE: the name changed while a non-empty revisionName stayed the same."""
    if dict(new) == dict(old):
        return []
    revision = new.get("revisionName") or ""
    if revision and revision == (old.get("revisionName") or "") and (new.get("name") or "") != (old.get("name") or ""):
        message = "the Matcher Name has been updated without updating the RevisionName"
        return [Cause(FIELD_VALUE_INVALID, message, f"spec.{matcher.field}.revisionName")]
    return []


def validate_matchers(vm: Mapping[str, Any], old_vm: Mapping[str, Any] | None = None) -> list[Cause]:
    """The matcher causes of the VM mutating webhook; `old_vm` only on UPDATE.

    Like upstream, only the first non-empty group is returned, in this order: instance type update,
    preference update, instance type matcher, preference matcher.
    """
    groups: list[list[Cause]] = []
    if old_vm is not None:
        for matcher in MATCHERS:
            new, old = _matcher(vm, matcher), _matcher(old_vm, matcher)
            if new is not None and old is not None:
                groups.append(_update_causes(new, old, matcher))
    for matcher in MATCHERS:
        found = _matcher(vm, matcher)
        if found is not None:
            groups.append(_validate_one(found, matcher))
    return next((group for group in groups if group), [])


def unknown_kind_errors(vm: Mapping[str, Any]) -> list[tuple[MatcherKind, str]]:
    """(matcher, error text) for each matcher whose kind is not one upstream accepts."""
    problems: list[tuple[MatcherKind, str]] = []
    for matcher in MATCHERS:
        found = _matcher(vm, matcher)
        if found is None:
            continue
        try:
            canonical_kind(matcher, found.get("kind"))
        except UnknownKindError as exc:
            problems.append((matcher, str(exc)))
    return problems
