"""Rejections shaped like upstream's webhook helpers (instancetype_webhook.kubevirt.rejection)."""
from __future__ import annotations

from instancetype_webhook.kubevirt.causes import Cause
from instancetype_webhook.kubevirt.rejection import MAX_CAUSES, error, reject


def test_reject_keeps_ten_causes():
    causes = [Cause("FieldValueInvalid", f"m{i}", f"f{i}") for i in range(12)]
    verdict = reject(causes)
    assert len(verdict.causes) == 10
    assert verdict.message == ", ".join(f"m{i}" for i in range(10)) + ", and 2 more validation errors"
    assert reject(causes[:2]).message == "m0, m1"


def test_a_rejection_from_causes_is_a_422_with_the_causes_kept_in_order():
    causes = [Cause("FieldValueInvalid", "first", "a"), Cause("FieldValueRequired", "second", "b")]
    verdict = reject(causes)
    assert (verdict.allowed, verdict.code) == (False, 422)
    assert verdict.causes == causes and verdict.causes is not causes
    assert verdict.warnings == []


def test_exactly_max_causes_adds_no_more_errors_suffix():
    assert MAX_CAUSES == 10
    causes = [Cause("FieldValueInvalid", f"m{i}") for i in range(MAX_CAUSES)]
    verdict = reject(causes)
    assert len(verdict.causes) == MAX_CAUSES and "more validation errors" not in verdict.message
    eleven = reject([*causes, Cause("FieldValueInvalid", "m10")])
    assert eleven.message.endswith("m9, and 1 more validation errors") and len(eleven.causes) == MAX_CAUSES


def test_a_rejection_from_an_error_is_a_400_without_causes():
    verdict = error("bad quantity")
    assert (verdict.allowed, verdict.code, verdict.message, verdict.causes) == (False, 400, "bad quantity", [])
