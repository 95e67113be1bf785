"""The live-update planner: before a running VM is edited, what upstream KubeVirt will do with the change
(admitted or refused, hot-plugged into the running VMI, or left waiting for a restart), as plain data.

    start_vm(vm, source, settings) -> Started            the VM as created and started (offline)
    plan_update(started, new_vm, settings) -> Plan       the UPDATE's admission, RestartRequired, the VMI patch
    rows.outcome_rows(plan, before, after) -> [Row]      per-field rows (now, after, live/restart/refused, why)
    warnings.plan_warnings(plan, vmi) -> [str]           the mutating webhook's admission warnings

Behaviour: tests/data/shared/spec/kubevirt-liveupdate-spec.md (upstream function names in each module).
"""
from instancetype_webhook.kubevirt.liveupdate.model import GENERIC_RESTART, Plan, StartError, SyncError
from instancetype_webhook.kubevirt.liveupdate.plan import plan_update
from instancetype_webhook.kubevirt.liveupdate.start import Started, merge_patch, running_vmi, start_vm

__all__ = ["GENERIC_RESTART", "Plan", "StartError", "Started", "SyncError", "merge_patch", "plan_update",
           "running_vmi", "start_vm"]
