"""The live handlers of virt-controller's VM sync, each against a running VMI: what they patch, when they ask
for a restart (the first message stays), and the transient errors (another hotplug, a migration)."""
from __future__ import annotations

import copy
from typing import Any

from instancetype_webhook.kubevirt.liveupdate.handlers import (
    Sync,
    handle_affinity,
    handle_cpu,
    handle_memory,
    handle_tolerations,
    hotplug_conditions,
    is_migrating,
)

MIGRATING = {"startTimestamp": "2026-01-01T00:00:00Z"}


def running(cpu: dict[str, Any] | None = None, memory: dict[str, Any] | None = None,
            resources: dict[str, Any] | None = None, conditions: list[dict[str, str]] | None = None,
            migration: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    domain: dict[str, Any] = {"cpu": cpu or {"sockets": 1, "cores": 1, "threads": 1, "maxSockets": 4},
                              "memory": memory or {"guest": "2Gi", "maxGuest": "8Gi"}}
    if resources:
        domain["resources"] = resources
    status: dict[str, Any] = {
        "conditions": conditions if conditions is not None else [{"type": "LiveMigratable", "status": "True"}],
        "memory": {"guestAtBoot": "2Gi", "guestCurrent": "2Gi", "guestRequested": "2Gi"},
        "currentCPUTopology": {"sockets": 1, "cores": 1, "threads": 1}}
    if migration:
        status["migrationState"] = migration
    return {"spec": {"domain": domain, **spec}, "status": status}


def template(sockets: int = 1, guest: str = "2Gi", resources: dict[str, Any] | None = None,
             **spec: Any) -> dict[str, Any]:
    domain: dict[str, Any] = {"cpu": {"sockets": sockets, "cores": 1, "threads": 1}, "memory": {"guest": guest}}
    if resources:
        domain["resources"] = resources
    return {"architecture": "amd64", "domain": domain, **spec}


def test_sync_set_patches_the_vmi_and_records_the_path() -> None:
    sync = Sync({"spec": {}})
    sync.set("spec.domain.cpu.sockets", 2)
    sync.set("spec.nodeSelector", None)
    assert sync.vmi == {"spec": {"domain": {"cpu": {"sockets": 2}}}}
    assert sync.patched == {"spec.domain.cpu.sockets": 2, "spec.nodeSelector": None}


def test_sync_keeps_the_first_restart_message() -> None:
    sync = Sync({})
    sync.restart_required("first")
    sync.restart_required("second")
    assert sync.restart == "first"


def test_is_migrating_until_the_migration_ends() -> None:
    assert is_migrating(running(migration=MIGRATING))
    assert not is_migrating(running(migration={**MIGRATING, "endTimestamp": "2026-01-01T00:01:00Z"}))
    assert not is_migrating(running())


def test_cpu_sockets_up_within_max_sockets_are_patched() -> None:
    sync = Sync(running())
    assert handle_cpu(template(sockets=3), sync) is None
    assert sync.patched == {"spec.domain.cpu.sockets": 3} and sync.restart is None


def test_cpu_requests_and_limits_grow_by_the_vcpu_delta_at_the_allocation_ratio() -> None:
    resources = {"requests": {"cpu": "100m"}, "limits": {"cpu": "1"}}
    sync = Sync(running(resources=copy.deepcopy(resources)))
    handle_cpu(template(sockets=3, resources=resources), sync)
    assert sync.patched["spec.domain.resources.requests"] == {"cpu": "300m"}
    assert sync.patched["spec.domain.resources.limits"] == {"cpu": "1200m"}
    halved = Sync(running(resources=copy.deepcopy(resources)), cpu_allocation_ratio=2)
    handle_cpu(template(sockets=2, resources={"requests": {"cpu": "100m"}}), halved)
    assert halved.patched["spec.domain.resources.requests"] == {"cpu": "600m"}
    assert "spec.domain.resources.limits" not in halved.patched  # the VM sets no CPU limit


def test_cpu_restarts_and_errors() -> None:
    above = Sync(running())
    handle_cpu(template(sockets=5), above)
    assert above.restart == "CPU sockets updated in template spec to a value higher than what's available"
    down = Sync(running(cpu={"sockets": 2, "cores": 1, "threads": 1, "maxSockets": 4}))
    handle_cpu(template(sockets=1), down)
    assert down.restart == "Reduction of CPU socket count requires a restart" and down.patched == {}
    arm = Sync(running())
    handle_cpu(template(sockets=2, architecture="arm64"), arm)
    assert arm.restart == "ARM doesn't support CPU hotplug"
    busy = handle_cpu(template(sockets=2), Sync(running(conditions=[{"type": "HotVCPUChange", "status": "True"}])))
    assert busy is not None and busy.reason == "HotPlugCPUError" and busy.message.endswith("another CPU hotplug is "
                                                                                           "in progress")
    moving = handle_cpu(template(sockets=2), Sync(running(migration=MIGRATING)))
    assert moving is not None and "while VMI is migrating" in moving.message
    same = Sync(running(conditions=[{"type": "HotVCPUChange", "status": "True"}]))
    assert handle_cpu(template(sockets=1), same) is None and same.patched == {}  # nothing to do: no error


def test_affinity_and_node_selector_are_patched_unless_migrating() -> None:
    sync = Sync(running())
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}}}
    assert handle_affinity(template(nodeSelector={"zone": "a"}, affinity=affinity), sync) is None
    assert sync.patched == {"spec.affinity": affinity, "spec.nodeSelector": {"zone": "a"}}
    error = handle_affinity(template(nodeSelector={"zone": "a"}), Sync(running(migration=MIGRATING)))
    assert error is not None and error.reason == "AffinityChangeError"
    unchanged = Sync(running(migration=MIGRATING, nodeSelector={"zone": "a"}))
    assert handle_affinity(template(nodeSelector={"zone": "a"}), unchanged) is None and unchanged.patched == {}


def test_tolerations_are_patched_unless_migrating() -> None:
    toleration = [{"key": "k", "operator": "Exists"}]
    sync = Sync(running())
    assert handle_tolerations(template(tolerations=toleration), sync) is None
    assert sync.patched == {"spec.tolerations": toleration}
    error = handle_tolerations(template(tolerations=toleration), Sync(running(migration=MIGRATING)))
    assert error is not None and error.reason == "TolerationsChangeError"
    assert handle_tolerations(template(), Sync(running(migration=MIGRATING))) is None


def test_memory_up_is_patched_with_the_request_and_limit() -> None:
    resources = {"requests": {"memory": "2Gi"}, "limits": {"memory": "3Gi"}}
    sync = Sync(running(resources=copy.deepcopy(resources)))
    assert handle_memory(template(guest="4Gi", resources=resources), sync) is None
    assert sync.patched == {"spec.domain.memory.guest": "4Gi",
                            "spec.domain.resources.requests": {"memory": "4Gi"},
                            "spec.domain.resources.limits": {"memory": "5Gi"}}


def test_memory_restarts() -> None:
    def restart(vmi: dict[str, Any], guest: str) -> str | None:
        sync = Sync(vmi)
        assert handle_memory(template(guest=guest), sync) is None
        return sync.restart

    assert restart(running(), "2Gi") is None
    assert restart(running(), "16Gi") == ("memory hotplug not supported, Guest memory is greater than the "
                                          "configured maxGuest memory")
    assert restart(running(), "1Gi") == ("memory updated in template spec to a value lower than what the VM "
                                         "started with")
    assert "only available for migratable VMs" in restart(running(conditions=[]), "4Gi")
    assert "not available for this VM configuration" in restart(running(memory={"guest": "2Gi"}), "4Gi")
    failed = running(conditions=[{"type": "LiveMigratable", "status": "True"},
                                 {"type": "HotMemoryChange", "status": "False"}])
    assert "Memory-hotplug failed" in restart(failed, "2Gi")
    assert restart(running(), "3001Mi") == "memory hotplug not supported, Guest memory must be 2Mi aligned"
    assert restart(running(), "4Gi") is None


def test_memory_errors_are_transient() -> None:
    busy = running(conditions=[{"type": "LiveMigratable", "status": "True"},
                               {"type": "HotMemoryChange", "status": "True"}])
    error = handle_memory(template(guest="4Gi"), Sync(busy))
    assert error is not None and error.reason == "HotPlugMemoryError" and "in progress" in error.message
    error = handle_memory(template(guest="4Gi"), Sync(running(migration=MIGRATING)))
    assert error is not None and "while VMI is migrating" in error.message


def test_hotplug_conditions_the_vmi_controller_adds() -> None:
    vmi = running(cpu={"sockets": 2, "cores": 1, "threads": 1, "maxSockets": 4},
                  memory={"guest": "4Gi", "maxGuest": "8Gi"})
    assert hotplug_conditions(vmi) == ["HotVCPUChange", "HotMemoryChange"]
    assert hotplug_conditions(running()) == []
    present = running(cpu={"sockets": 2, "cores": 1, "threads": 1, "maxSockets": 4},
                      conditions=[{"type": "HotVCPUChange", "status": "True"}])
    assert hotplug_conditions(present) == []
    no_max = running(cpu={"sockets": 2, "cores": 1, "threads": 1})
    assert hotplug_conditions(no_max) == []
