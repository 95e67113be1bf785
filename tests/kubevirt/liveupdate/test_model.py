"""The planner's answer as values: a Plan is refused when its admission is, live only when allowed, patched
and without a pending restart; the templates it carries for reports take no part in equality."""
from __future__ import annotations

import dataclasses

import pytest

from instancetype_webhook.kubevirt.causes import Cause, Verdict
from instancetype_webhook.kubevirt.liveupdate.model import GENERIC_RESTART, Plan, StartError, SyncError

PATCH = {"spec.domain.cpu.sockets": 2}


def test_refused_follows_the_admission() -> None:
    assert Plan(Verdict.deny([Cause("FieldValueInvalid", "no", "spec.x")])).refused
    assert not Plan(Verdict.allow()).refused


def test_live_needs_an_allowed_patch_without_a_restart() -> None:
    assert Plan(Verdict.allow(), vmi_patched=PATCH).live
    assert not Plan(Verdict.allow()).live  # nothing patched
    assert not Plan(Verdict.allow(), vmi_patched=PATCH, restart_required=GENERIC_RESTART).live
    assert not Plan(Verdict.deny([Cause("FieldValueInvalid", "no", "spec.x")]), vmi_patched=PATCH).live


def test_defaults_are_empty_and_not_shared() -> None:
    one, two = Plan(Verdict.allow()), Plan(Verdict.allow())
    assert (one.restart_required, one.vmi_patched, one.conditions, one.sync_error) == (None, {}, [], None)
    one.conditions.append("HotVCPUChange")
    assert two.conditions == []


def test_the_report_templates_take_no_part_in_equality() -> None:
    assert Plan(Verdict.allow(), before={"a": 1}, after={"a": 2}) == Plan(Verdict.allow())
    assert Plan(Verdict.allow(), restart_required="x") != Plan(Verdict.allow())


def test_a_sync_error_is_a_frozen_value() -> None:
    error = SyncError("HotPlugCPUError", "busy")
    assert error == SyncError("HotPlugCPUError", "busy") != SyncError("HotPlugCPUError", "other")
    with pytest.raises(dataclasses.FrozenInstanceError):
        error.reason = "x"  # type: ignore[misc]


def test_start_error_is_an_exception_with_its_message() -> None:
    with pytest.raises(StartError, match="no spec.template"):
        raise StartError("the VirtualMachine has no spec.template")
