"""A plan as table rows and as admission warnings."""
from __future__ import annotations

from instancetype_webhook.kubevirt.causes import Cause, Verdict
from instancetype_webhook.kubevirt.liveupdate import GENERIC_RESTART, Plan, SyncError
from instancetype_webhook.kubevirt.liveupdate.rows import changed_fields, outcome_rows, show
from instancetype_webhook.kubevirt.liveupdate.warnings import plan_warnings

BEFORE = {"domain": {"cpu": {"sockets": 1, "cores": 1}, "memory": {"guest": "4Gi"}}, "hostname": "a"}
AFTER = {"domain": {"cpu": {"sockets": 2, "cores": 1}, "memory": {"guest": "4096Mi"}}, "hostname": "b"}
VMI = {"spec": {"domain": {"cpu": {"sockets": 1}, "memory": {"guest": "4Gi"}}}}


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


def test_warnings() -> None:
    plan = Plan(Verdict.allow(), vmi_patched={"spec.domain.cpu.sockets": 2, "spec.domain.memory.guest": "8Gi",
                                              "spec.tolerations": []})
    assert plan_warnings(plan, VMI) == ["live update: CPU sockets 1 -> 2 will be hot-plugged",
                                        "live update: guest memory 4Gi -> 8Gi will be hot-plugged",
                                        "live update: tolerations will be updated on the running VMI"]
    assert plan_warnings(Plan(Verdict.allow(), restart_required="x"), VMI) == ["live update: needs a restart: x"]
    refused = Plan(Verdict.deny([Cause("FieldValueInvalid", "too many", "spec.x")]))
    assert plan_warnings(refused, VMI) == ["live update: KubeVirt refuses this update: too many"]
    missing = Plan(Verdict.allow(), sync_error=SyncError("FailedFindInstancetype", '"x" not found'))
    assert plan_warnings(missing, VMI) == ['live update: nothing changes, virt-controller reports '
                                           'FailedFindInstancetype: "x" not found']
    busy = Plan(Verdict.allow(), sync_error=SyncError("HotPlugCPUError", "another CPU hotplug is in progress"))
    assert plan_warnings(busy, VMI) == ["live update: not applied yet, virt-controller retries: another CPU hotplug "
                                        "is in progress"]


def test_show_shortens() -> None:
    assert show(None) == "-" and show({"a": 1}) == '{"a":1}' and show("x" * 50).endswith("...")
