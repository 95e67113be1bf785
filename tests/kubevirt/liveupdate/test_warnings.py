"""A plan as the mutating webhook's admission warnings on an UPDATE of a running VM."""
from __future__ import annotations

from instancetype_webhook.kubevirt.causes import Cause, Verdict
from instancetype_webhook.kubevirt.liveupdate import Plan, SyncError
from instancetype_webhook.kubevirt.liveupdate.warnings import plan_warnings

VMI = {"spec": {"domain": {"cpu": {"sockets": 1}, "memory": {"guest": "4Gi"}}}}


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


def test_placement_nics_and_volumes_are_named_without_values() -> None:
    plan = Plan(Verdict.allow(), vmi_patched={"spec.nodeSelector": {"zone": "a"}, "spec.affinity": None,
                                              "spec.domain.devices.interfaces": [], "spec.volumes": []})
    assert plan_warnings(plan, VMI) == ["live update: nodeSelector will be updated on the running VMI",
                                        "live update: affinity will be updated on the running VMI",
                                        "live update: network interfaces will be hot-plugged or unplugged",
                                        "live update: hotpluggable volumes will be hot-plugged or unplugged"]


def test_a_path_without_a_name_is_not_told_and_an_unchanged_plan_says_nothing() -> None:
    assert plan_warnings(Plan(Verdict.allow(), vmi_patched={"spec.domain.resources.requests": {}}), VMI) == []
    assert plan_warnings(Plan(Verdict.allow()), VMI) == []


def test_memory_is_shown_canonical_and_an_absent_value_as_a_dash() -> None:
    plan = Plan(Verdict.allow(), vmi_patched={"spec.domain.memory.guest": "8192Mi", "spec.domain.cpu.sockets": 2})
    assert plan_warnings(plan, {"spec": {"domain": {"memory": {"guest": "4096Mi"}}}}) == [
        "live update: CPU sockets - -> 2 will be hot-plugged",
        "live update: guest memory 4Gi -> 8Gi will be hot-plugged"]
