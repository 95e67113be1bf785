"""Causes, errors and verdicts as values (instancetype_webhook.kubevirt.causes)."""
from __future__ import annotations

import dataclasses

import pytest

from instancetype_webhook.kubevirt.causes import (
    FIELD_VALUE_INVALID,
    FIELD_VALUE_NOT_SUPPORTED,
    FIELD_VALUE_REQUIRED,
    Cause,
    ExpandError,
    Verdict,
)


def test_cause_wire_form_names_the_field_only_when_there_is_one():
    assert Cause(FIELD_VALUE_INVALID, "m", "spec.x").to_dict() == {
        "reason": "FieldValueInvalid", "message": "m", "field": "spec.x"}
    assert Cause(FIELD_VALUE_REQUIRED, "m").to_dict() == {"reason": "FieldValueRequired", "message": "m"}
    assert FIELD_VALUE_NOT_SUPPORTED == "FieldValueNotSupported"


def test_causes_are_frozen_values():
    cause = Cause(FIELD_VALUE_INVALID, "m", "f")
    assert cause == Cause(FIELD_VALUE_INVALID, "m", "f") and cause != Cause(FIELD_VALUE_INVALID, "m", "g")
    with pytest.raises(dataclasses.FrozenInstanceError):
        cause.message = "other"  # type: ignore[misc]


def test_expand_error_carries_kind_message_and_a_copy_of_the_causes():
    causes = [Cause(FIELD_VALUE_INVALID, "m", "f")]
    err = ExpandError("conflict", "the message", causes)
    assert (err.kind, err.message, str(err)) == ("conflict", "the message", "the message")
    assert err.causes == causes and err.causes is not causes
    assert ExpandError("notFound", "gone").causes == []


def test_allow_keeps_warnings_and_nothing_else():
    warnings = ["w"]
    verdict = Verdict.allow(warnings)
    assert verdict == Verdict(allowed=True, warnings=["w"]) and verdict.warnings is not warnings
    assert Verdict.allow() == Verdict(allowed=True)
    assert (verdict.message, verdict.code, verdict.causes) == (None, None, [])


def test_deny_joins_the_messages_and_defaults_to_422():
    causes = [Cause(FIELD_VALUE_INVALID, "a", "x"), Cause(FIELD_VALUE_REQUIRED, "b", "y")]
    verdict = Verdict.deny(causes)
    assert (verdict.allowed, verdict.code, verdict.message) == (False, 422, "a, b")
    assert verdict.causes == causes and verdict.causes is not causes
    assert Verdict.deny(causes[:1], code=400).code == 400
