"""The conformance runner's `expectedLiveUpdate` check: the case's `input.vm` created and started (`start_vm`,
the running VMI with `input.liveUpdate.vmi` merged over it), then edited to `input.liveUpdate.newVm`
(`plan_update`), answered in the case file's shape."""
from __future__ import annotations

from typing import Any

from instancetype_webhook.conformance.cases import case_release, case_settings, case_source, case_vm
from instancetype_webhook.conformance.compare import Difference, first_difference
from instancetype_webhook.conformance.engine import mutate_status
from instancetype_webhook.kubevirt.liveupdate.model import Plan
from instancetype_webhook.kubevirt.liveupdate.plan import plan_update
from instancetype_webhook.kubevirt.liveupdate.start import Started, merge_patch, start_vm
from instancetype_webhook.kubevirt.prune import prune_to_release


def plan_answer(plan: Plan) -> dict[str, Any]:
    """A Plan in the shape of `expectedLiveUpdate`."""
    admission: dict[str, Any] = {"allowed": plan.admission.allowed}
    if not plan.admission.allowed:
        admission["status"] = mutate_status(plan.admission)
        return {"admission": admission}
    answer: dict[str, Any] = {
        "admission": admission,
        "restartRequired": plan.restart_required,
        "vmiPatched": plan.vmi_patched,
        "conditions": [{"type": kind, "status": "True"} for kind in plan.conditions],
    }
    if plan.sync_error is not None:
        answer["syncError"] = {"reason": plan.sync_error.reason, "message": plan.sync_error.message}
    return answer


def case_plan(case: dict[str, Any]) -> Plan:
    case_input = case["input"]
    settings = case_settings(case_input)
    started = start_vm(case_vm(case), case_source(case_input), settings)
    live_update = case_input.get("liveUpdate") or {}
    if live_update.get("vmi") is not None:
        started = Started(started.stored_vm, started.start_spec, started.source,
                          merge_patch(started.vmi, live_update["vmi"]))
    new_vm = prune_to_release(live_update.get("newVm") or {}, "vm", case_release())
    return plan_update(started, new_vm, settings)


def check_live_update(case: dict[str, Any]) -> Difference | None:
    expected = case["expectedLiveUpdate"]
    ours = plan_answer(case_plan(case))
    return first_difference(ours, expected, "")
