"""A plan as table rows: one per changed field, with what happens to it and why."""
from __future__ import annotations

from instancetype_webhook.kubevirt.causes import Cause, Verdict
from instancetype_webhook.kubevirt.liveupdate import GENERIC_RESTART, Plan, SyncError
from instancetype_webhook.kubevirt.liveupdate.rows import changed_fields, outcome_rows, show

BEFORE = {"domain": {"cpu": {"sockets": 1, "cores": 1}, "memory": {"guest": "4Gi"}}, "hostname": "a"}
AFTER = {"domain": {"cpu": {"sockets": 2, "cores": 1}, "memory": {"guest": "4096Mi"}}, "hostname": "b"}


def test_changed_fields_compare_semantically() -> None:
    assert changed_fields(BEFORE, AFTER) == [("domain.cpu.sockets", 1, 2), ("hostname", "a", "b")]


def test_rows_say_live_restart_refused_and_retry() -> None:
    live = Plan(Verdict.allow(), vmi_patched={"spec.domain.cpu.sockets": 2}, conditions=["HotVCPUChange"])
    rows = outcome_rows(live, BEFORE, AFTER, (("instancetype", "u1.medium", "u1.large"),))
    assert [(r.field, r.outcome) for r in rows] == [("instancetype", "live"), ("domain.cpu.sockets", "live"),
                                                    ("hostname", "live")]
    assert "HotVCPUChange" in rows[1].why
    restart = outcome_rows(Plan(Verdict.allow(), restart_required=GENERIC_RESTART), BEFORE, AFTER)
    assert {r.outcome for r in restart} == {"restart"} and GENERIC_RESTART in restart[0].why
    refused = Plan(Verdict.deny([Cause("FieldValueInvalid", "no", "spec.x")]))
    assert {r.outcome for r in outcome_rows(refused, BEFORE, AFTER)} == {"refused"}
    retry = Plan(Verdict.allow(), sync_error=SyncError("HotPlugCPUError", "busy"))
    assert outcome_rows(retry, BEFORE, AFTER)[0].why == "HotPlugCPUError: busy"


def test_show_shortens() -> None:
    assert show(None) == "-" and show({"a": 1}) == '{"a":1}' and show("x" * 50).endswith("...")
