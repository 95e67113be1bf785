"""The planner against each row of the live-update spec's summary table
(tests/data/shared/spec/kubevirt-liveupdate-spec.md): admission, RestartRequired with upstream's message,
what is patched into the running VMI, the hotplug conditions, the transient sync errors."""
from __future__ import annotations

import copy
from typing import Any

import pytest

from instancetype_webhook.kubevirt.configuration import settings_from_configuration
from instancetype_webhook.kubevirt.liveupdate import (
    GENERIC_RESTART,
    Plan,
    Started,
    StartError,
    merge_patch,
    plan_update,
    start_vm,
)
from instancetype_webhook.kubevirt.releases import (
    NAD_SWAP_ALWAYS_LIVE,
    NAD_SWAP_MIGRATABLE_ONLY,
    POD_NETWORK_ADD_RESTART,
)
from instancetype_webhook.kubevirt.source import InMemorySource
from instancetype_webhook.sources.catalog import load_catalog
from tests.kit.builders import edited, undecodable_revision
from tests.kit.builders import vm as build_vm
from tests.kit.releases import settings_as, sides

STAGE = {"vmRolloutStrategy": "Stage"}
HIGHER = "CPU sockets updated in template spec to a value higher than what's available"
REDUCTION = "Reduction of CPU socket count requires a restart"


def vm(domain: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    template = {"volumes": [{"name": "root", "containerDisk": {"image": "quay.io/containerdisks/fedora:41"}}],
                **spec.pop("template", {})}
    return build_vm("web", "apps", metadata={"uid": "0b6c-web"}, run_strategy="Always", template=template, spec=spec,
                    domain={"devices": {}, "cpu": {"sockets": 1}, "memory": {"guest": "2Gi"}, **(domain or {})})


def typed(name: str = "u1.medium", preference: str | None = "fedora") -> dict[str, Any]:
    out = vm(domain={"devices": {}, "cpu": None, "memory": None})
    domain = out["spec"]["template"]["spec"]["domain"]
    domain.pop("cpu"), domain.pop("memory")
    out["spec"]["instancetype"] = {"name": name}
    if preference:
        out["spec"]["preference"] = {"name": preference}
    return out


def plan(old: dict[str, Any], new: dict[str, Any], config: dict[str, Any] | None = None,
         vmi: dict[str, Any] | None = None, objects: list[dict[str, Any]] | None = None) -> Plan:
    settings = settings_from_configuration(config)
    source = load_catalog(default_namespace="apps")
    for obj in objects or []:
        source.add(obj)
    started = start_vm(old, source, settings)
    if vmi:
        started = Started(started.stored_vm, started.start_spec, started.source, merge_patch(started.vmi, vmi))
    return plan_update(started, new, settings)


SOCKETS = "spec.template.spec.domain.cpu.sockets"
GUEST = "spec.template.spec.domain.memory.guest"


# -- CPU sockets ------------------------------------------------------------------------------------------

def test_sockets_up_within_max_sockets_go_live_with_hot_vcpu_change() -> None:
    p = plan(vm(), edited(vm(), SOCKETS, 3))  # maxSockets defaulted to 1 x 4
    assert p.admission.allowed and p.restart_required is None
    assert p.vmi_patched == {"spec.domain.cpu.sockets": 3} and p.conditions == ["HotVCPUChange"]


def test_sockets_up_under_stage_need_a_restart() -> None:
    p = plan(vm(), edited(vm(), SOCKETS, 2), STAGE)
    assert p.restart_required == GENERIC_RESTART and p.vmi_patched == {} and p.conditions == []


def test_sockets_above_the_boot_maximum_need_a_restart() -> None:
    p = plan(vm(), edited(vm(), SOCKETS, 5))
    assert p.restart_required == HIGHER and p.vmi_patched == {}


def test_cluster_max_cpu_sockets_below_sockets_is_raised_to_them() -> None:
    old = vm(domain={"cpu": {"sockets": 3}})
    p = plan(old, edited(old, SOCKETS, 4), {"liveUpdateConfiguration": {"maxCpuSockets": 2}})
    assert p.restart_required == HIGHER  # maxSockets = max(2, 3) = 3


@pytest.mark.parametrize("config, causes", [(None, 2), (STAGE, 1)])
def test_sockets_above_an_explicit_max_sockets_are_refused_under_both_strategies(config, causes) -> None:
    old = vm(domain={"cpu": {"sockets": 1, "maxSockets": 2}})
    p = plan(old, edited(old, SOCKETS, 3), config)
    assert p.refused and p.admission.code == 422
    assert [c.field for c in p.admission.causes] == [SOCKETS] * causes
    assert p.admission.causes[0].message == \
        "Number of sockets in CPU topology is greater than the maximum sockets allowed"


def test_sockets_down_need_a_restart() -> None:
    old = vm(domain={"cpu": {"sockets": 2}})
    assert plan(old, edited(old, SOCKETS, 1)).restart_required == REDUCTION


def test_arm64_with_explicit_max_sockets_does_not_hotplug() -> None:
    old = vm(domain={"cpu": {"sockets": 1, "maxSockets": 4}}, template={"architecture": "arm64"})
    p = plan(old, edited(old, SOCKETS, 2))
    assert p.restart_required == "ARM doesn't support CPU hotplug" and p.vmi_patched == {}


def test_arm64_without_max_sockets_has_nothing_available() -> None:
    old = vm(template={"architecture": "arm64"})
    assert plan(old, edited(old, SOCKETS, 2)).restart_required == HIGHER


@pytest.mark.parametrize("field, value", [("cores", 2), ("threads", 2), ("maxSockets", 8),
                                          ("dedicatedCpuPlacement", True), ("model", "host-passthrough")])
def test_other_cpu_fields_need_a_restart(field: str, value: Any) -> None:
    new = edited(vm(), f"spec.template.spec.domain.cpu.{field}", value)
    assert plan(vm(), new).restart_required == GENERIC_RESTART


def test_dedicated_cpus_plug_sockets_like_shared_ones() -> None:
    old = vm(domain={"cpu": {"sockets": 1, "cores": 2, "dedicatedCpuPlacement": True}})
    p = plan(old, edited(old, SOCKETS, 2))
    assert p.vmi_patched == {"spec.domain.cpu.sockets": 2} and p.conditions == ["HotVCPUChange"]


def test_cpu_requests_and_limits_grow_by_the_vcpu_delta() -> None:
    old = vm(domain={"cpu": {"sockets": 1, "cores": 2}, "resources": {"requests": {"cpu": "200m"},
                                                                      "limits": {"cpu": "1"}}})
    p = plan(old, edited(old, SOCKETS, 2))  # +2 vCPUs at 100m each (cpuAllocationRatio 10)
    assert p.vmi_patched["spec.domain.resources.requests"] == {"cpu": "400m"}
    assert p.vmi_patched["spec.domain.resources.limits"] == {"cpu": "1200m"}


# -- memory ------------------------------------------------------------------------------------------------

def test_guest_memory_up_goes_live_with_hot_memory_change() -> None:
    p = plan(vm(), edited(vm(), GUEST, "4Gi"))
    assert p.vmi_patched == {"spec.domain.memory.guest": "4Gi"} and p.conditions == ["HotMemoryChange"]


def test_guest_memory_under_stage_needs_a_restart() -> None:
    assert plan(vm(), edited(vm(), GUEST, "4Gi"), STAGE).restart_required == GENERIC_RESTART


def test_memory_request_follows_the_guest_delta() -> None:
    old = vm(domain={"resources": {"requests": {"memory": "2Gi"}, "limits": {"memory": "3Gi"}}})
    new = edited(old, GUEST, "3Gi")
    p = plan(old, new)
    assert p.vmi_patched["spec.domain.resources.requests"] == {"memory": "3Gi"}
    assert p.vmi_patched["spec.domain.resources.limits"] == {"memory": "4Gi"}


@pytest.mark.parametrize("vmi, message", [
    ({"spec": {"domain": {"memory": {"maxGuest": None}}}},
     "memory updated in template spec. Memory-hotplug is not available for this VM configuration"),
    ({"status": {"conditions": [{"type": "LiveMigratable", "status": "False"}]}},
     "memory updated in template spec. Memory-hotplug is only available for migratable VMs"),
    ({"status": {"conditions": [{"type": "LiveMigratable", "status": "True"},
                                {"type": "HotMemoryChange", "status": "False"}]}},
     "memory updated in template spec. Memory-hotplug failed and is not available for this VM configuration"),
])
def test_memory_hotplug_unavailable_on_this_vmi(vmi: dict[str, Any], message: str) -> None:
    p = plan(vm(), edited(vm(), GUEST, "4Gi"), vmi=vmi)
    assert p.restart_required == message and p.vmi_patched == {}


def test_a_failed_memory_hotplug_keeps_restart_required_even_without_a_change() -> None:
    failed = {"status": {"conditions": [{"type": "LiveMigratable", "status": "True"},
                                        {"type": "HotMemoryChange", "status": "False"}]}}
    p = plan(vm(), edited(vm(), SOCKETS, 2), vmi=failed)
    assert p.restart_required.startswith("memory updated in template spec. Memory-hotplug failed")


@pytest.mark.parametrize("guest, error", [("2049Mi", "Guest memory must be 2Mi aligned"),
                                          ("9Gi", "Guest memory is greater than the configured maxGuest memory")])
def test_memory_invalid_for_hotplug_needs_a_restart(guest: str, error: str) -> None:
    assert plan(vm(), edited(vm(), GUEST, guest)).restart_required == f"memory hotplug not supported, {error}"


def test_memory_below_guest_at_boot_needs_a_restart() -> None:
    assert plan(vm(), edited(vm(), GUEST, "1Gi")).restart_required == \
        "memory updated in template spec to a value lower than what the VM started with"


def test_memory_down_to_guest_at_boot_after_a_plug_is_a_live_unplug() -> None:
    plugged = {"spec": {"domain": {"memory": {"guest": "4Gi"}}},
               "status": {"memory": {"guestCurrent": "4Gi", "guestRequested": "4Gi"}}}
    p = plan(vm(), vm(), vmi=plugged)
    assert p.vmi_patched == {"spec.domain.memory.guest": "2Gi"} and p.conditions == ["HotMemoryChange"]


def test_s390x_gets_cpu_but_never_memory_hotplug() -> None:
    old = vm(template={"architecture": "s390x"})
    assert plan(old, edited(old, SOCKETS, 2)).vmi_patched == {"spec.domain.cpu.sockets": 2}
    assert plan(old, edited(old, GUEST, "4Gi")).restart_required == \
        "memory updated in template spec. Memory-hotplug is not available for this VM configuration"


@pytest.mark.parametrize("config, refused", [(None, True), (STAGE, False)])
def test_explicit_max_guest_invalid_for_hotplug_is_refused_only_under_live_update(config, refused: bool) -> None:
    old = vm(domain={"memory": {"guest": "1Gi", "maxGuest": "4Gi"}})
    p = plan(old, edited(old, GUEST, "1025Mi"), config)
    assert p.refused is refused
    if refused:
        assert [(c.field, c.message) for c in p.admission.causes] == [(GUEST, "Guest memory must be 2Mi aligned")]
    else:
        assert p.restart_required == GENERIC_RESTART


# -- scheduling ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("field, value", [
    ("nodeSelector", {"disktype": "nvme"}),
    ("tolerations", [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}]),
    ("affinity", {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}}}),
])
def test_scheduling_fields_are_live_under_live_update_only(field: str, value: Any) -> None:
    new = edited(vm(), f"spec.template.spec.{field}", value)
    live = plan(vm(), new)
    assert live.vmi_patched == {f"spec.{field}": value} and live.conditions == [] and live.restart_required is None
    assert plan(vm(), new, STAGE).restart_required == GENERIC_RESTART


def test_scheduling_change_during_a_migration_is_retried() -> None:
    migrating = {"status": {"migrationState": {"startTimestamp": "2026-01-01T00:00:00Z"}}}
    p = plan(vm(), edited(vm(), "spec.template.spec.nodeSelector", {"a": "b"}), vmi=migrating)
    assert p.sync_error is not None and p.sync_error.reason == "AffinityChangeError"
    assert p.sync_error.message.endswith("Node affinity should not be changed during VMI migration")


# -- volumes and networks -----------------------------------------------------------------------------------

def test_hotpluggable_volume_needs_no_restart_a_plain_one_does() -> None:
    hot = edited(vm(), "spec.template.spec.volumes", vm()["spec"]["template"]["spec"]["volumes"] + [
        {"name": "data", "persistentVolumeClaim": {"claimName": "data", "hotpluggable": True}}])
    cold = edited(vm(), "spec.template.spec.volumes", vm()["spec"]["template"]["spec"]["volumes"] + [
        {"name": "data", "persistentVolumeClaim": {"claimName": "data"}}])
    assert plan(vm(), hot).restart_required is None
    assert plan(vm(), cold).restart_required == GENERIC_RESTART


def test_a_hotpluggable_volume_goes_into_the_vmi_with_its_disk() -> None:
    data = {"name": "data", "persistentVolumeClaim": {"claimName": "data", "hotpluggable": True}}
    new = edited(vm(), "spec.template.spec.volumes", vm()["spec"]["template"]["spec"]["volumes"] + [data])
    new["spec"]["template"]["spec"]["domain"]["devices"]["disks"] = [{"name": "data", "disk": {"bus": "scsi"}}]
    p = plan(vm(), new)
    assert p.restart_required is None
    assert [v["name"] for v in p.vmi_patched["spec.volumes"]] == ["root", "data"]
    assert p.vmi_patched["spec.domain.devices.disks"][-1] == {"name": "data", "disk": {"bus": "scsi"}}
    off = {"developerConfiguration": {"disabledFeatureGates": ["DeclarativeHotplugVolumes"]}}
    assert plan(vm(), new, off).vmi_patched == {}
    # and unplugged again: the VMI drops the volume and its disk
    plugged = {"volumes": p.vmi_patched["spec.volumes"],
               "domain": {"devices": {"disks": p.vmi_patched["spec.domain.devices.disks"]}}}
    removed = plan(vm(), vm(), vmi={"spec": plugged})
    assert [v["name"] for v in removed.vmi_patched["spec.volumes"]] == ["root"]
    assert [d["name"] for d in removed.vmi_patched["spec.domain.devices.disks"]] == ["root"]


def _with_nics(*nics: tuple[str, dict[str, Any], dict[str, Any]]) -> dict[str, Any]:
    out = vm()
    spec = out["spec"]["template"]["spec"]
    spec["domain"]["devices"]["interfaces"] = [{"name": n, **binding} for n, binding, _ in nics]
    spec["networks"] = [{"name": n, **net} for n, _, net in nics]
    return out


POD = ("default", {"masquerade": {}}, {"pod": {}})
BLUE = ("blue", {"bridge": {}}, {"multus": {"networkName": "blue-net"}})


@pytest.mark.parametrize("config", [None, STAGE])
def test_a_secondary_bridge_nic_is_hot_plugged_under_both_strategies(config) -> None:
    p = plan(_with_nics(POD), _with_nics(POD, BLUE), config)
    assert p.restart_required is None
    assert [i["name"] for i in p.vmi_patched["spec.domain.devices.interfaces"]] == ["default", "blue"]
    assert p.vmi_patched["spec.networks"][1] == {"name": "blue", "multus": {"networkName": "blue-net"}}


def test_a_nic_binding_change_needs_a_restart() -> None:
    p = plan(_with_nics(POD), _with_nics(("default", {"bridge": {}}, {"pod": {}})))
    assert p.restart_required == GENERIC_RESTART and p.vmi_patched == {}


def test_any_other_template_field_needs_a_restart_and_stops_the_live_handlers() -> None:
    new = edited(edited(vm(), "spec.template.spec.hostname", "db"), SOCKETS, 2)
    p = plan(vm(), new)
    assert p.restart_required == GENERIC_RESTART and p.vmi_patched == {}


def test_an_unchanged_vm_changes_nothing() -> None:
    p = plan(vm(), vm())
    assert (p.admission.allowed, p.restart_required, p.vmi_patched, p.conditions, p.sync_error) == \
        (True, None, {}, [], None)


# -- instance types and preferences -----------------------------------------------------------------------

def test_switch_to_a_bigger_instance_type_plugs_sockets_and_memory() -> None:
    p = plan(typed("u1.medium"), typed("u1.large"))
    assert p.vmi_patched == {"spec.domain.cpu.sockets": 2, "spec.domain.memory.guest": "8Gi"}
    assert p.conditions == ["HotVCPUChange", "HotMemoryChange"]


def test_downsizing_keeps_the_cpu_handlers_message() -> None:
    assert plan(typed("u1.large"), typed("u1.medium")).restart_required == REDUCTION


def test_switch_that_changes_a_non_live_field_needs_a_restart() -> None:
    assert plan(typed("u1.medium"), typed("cx1.large")).restart_required == GENERIC_RESTART


def test_switch_that_breaks_the_preference_requirements_is_refused() -> None:
    small = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineClusterInstancetype",
             "metadata": {"name": "tiny"}, "spec": {"cpu": {"guest": 1}, "memory": {"guest": "512Mi"}}}
    p = plan(typed("u1.medium"), typed("tiny"), objects=[small])
    assert p.refused and p.admission.message == (
        "failure checking preference requirements: insufficient Memory resources of 512Mi provided by instance type, "
        "preference requires 2Gi")


def test_a_template_field_the_instance_type_owns_is_refused() -> None:
    new = edited(typed(), "spec.template.spec.domain.cpu", {"sockets": 2})
    p = plan(typed(), new)
    assert p.refused and [c.field for c in p.admission.causes] == [SOCKETS]
    assert p.admission.message == \
        "VM field(s) spec.template.spec.domain.cpu.sockets conflicts with selected instance type"


def test_matcher_name_changed_with_a_stale_revision_name_is_refused() -> None:
    settings = settings_from_configuration(None)
    source = load_catalog(default_namespace="apps")
    started = start_vm(typed("u1.medium"), source, settings)
    pinned_name = started.stored_vm["status"]["instancetypeRef"]["controllerRevisionRef"]["name"]
    pinned = edited(typed("u1.medium"), "spec.instancetype.revisionName", pinned_name)
    started = start_vm(pinned, started.source, settings)  # the revision it pins exists
    assert plan_update(started, edited(pinned, "spec.instancetype.revisionName", None), settings).admission.allowed
    p = plan_update(started, edited(pinned, "spec.instancetype.name", "u1.large"), settings)
    assert p.refused and p.admission.code == 422
    assert [(c.field, c.message) for c in p.admission.causes] == [
        ("spec.instancetype.revisionName", "the Matcher Name has been updated without updating the RevisionName")]


def test_an_instance_type_that_does_not_exist_is_admitted_then_fails_the_sync() -> None:
    p = plan(typed("u1.medium", preference=None), typed("nope", preference=None))
    assert p.admission.allowed and p.restart_required is None and p.vmi_patched == {}
    assert p.sync_error is not None and p.sync_error.reason == "FailedFindInstancetype"
    assert p.sync_error.message == 'virtualmachineclusterinstancetypes.instancetype.kubevirt.io "nope" not found'


@pytest.mark.parametrize(("release", "line"), [("v1.7.4", 42), ("v1.8.4", 43), ("v1.9.0", 44), ("main", 44)])
def test_a_revision_the_scheme_cannot_decode_fails_the_sync_in_the_cluster_releases_words(release: str,
                                                                                          line: int) -> None:
    """The sync error names the line of client-go's register.go of the cluster's release, not main's."""
    settings = settings_as(release)
    source = load_catalog(default_namespace="apps")
    source.add(undecodable_revision("fedora-v1alpha2", "apps", "fedora"))
    started = start_vm(typed(), source, settings)
    p = plan_update(started, edited(typed(), "spec.preference.revisionName", "fedora-v1alpha2"), settings)
    assert p.admission.allowed and p.sync_error is not None and p.sync_error.reason == "FailedFindPreference"
    assert p.sync_error.message == (
        'failed to decode object in ControllerRevision: no kind "VirtualMachineClusterPreference" is registered '
        f'for version "instancetype.kubevirt.io/v1alpha2" in scheme "kubevirt.io/client-go/kubevirt/scheme/'
        f'register.go:{line}"')


# -- transient errors and bad input ----------------------------------------------------------------------

def test_cpu_hotplug_in_progress_is_a_sync_error() -> None:
    busy = {"status": {"conditions": [{"type": "LiveMigratable", "status": "True"},
                                      {"type": "HotVCPUChange", "status": "True"}]}}
    p = plan(vm(), edited(vm(), SOCKETS, 2), vmi=busy)
    assert p.sync_error is not None and p.sync_error.reason == "HotPlugCPUError"
    assert p.sync_error.message == \
        "Error encountered while handling CPU change request: another CPU hotplug is in progress"


def test_a_vm_that_cannot_be_started_is_a_start_error() -> None:
    with pytest.raises(StartError, match='"missing" not found'):
        start_vm(typed("missing", preference=None), InMemorySource(default_namespace="apps"),
                 settings_from_configuration(None))
    with pytest.raises(StartError, match="no spec.template"):
        start_vm({"kind": "VirtualMachine", "metadata": {"name": "x"}, "spec": {}}, InMemorySource(),
                 settings_from_configuration(None))


def test_guest_above_the_memory_limit_is_refused_under_stage_only() -> None:
    old = vm(domain={"resources": {"limits": {"memory": "3Gi"}}})
    new = edited(old, GUEST, "4Gi")
    stage = plan(old, new, STAGE)
    assert stage.refused and [c.field for c in stage.admission.causes] == [GUEST]
    assert stage.admission.message == ("spec.template.spec.domain.memory.guest '4Gi' must be equal to or less than "
                                       "the memory limit spec.template.spec.domain.resources.limits.memory '3Gi'")
    assert plan(old, new).admission.allowed


def test_a_revision_of_that_name_with_other_data_fails_the_sync() -> None:
    large = next(o for o in load_catalog().objects() if o["metadata"]["name"] == "u1.large")
    stale = {"apiVersion": "apps/v1", "kind": "ControllerRevision",
             "metadata": {"name": "web-u1.large-v1beta1--0", "namespace": "apps"},
             "data": {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineClusterInstancetype",
                      "metadata": {"name": "u1.large"}, "spec": {**large["spec"], "cpu": {"guest": 7}}}}
    p = plan(typed("u1.medium"), typed("u1.large"), objects=[stale])
    assert p.sync_error is not None and p.sync_error.reason == "FailedCreate"
    assert p.sync_error.message.endswith("found existing ControllerRevision with unexpected data: "
                                         "web-u1.large-v1beta1--0")
    assert p.vmi_patched == {} and p.restart_required is None


def test_a_restart_set_by_a_handler_does_not_stop_the_later_handlers() -> None:
    old = vm(domain={"cpu": {"sockets": 2}})
    new = edited(edited(old, SOCKETS, 1), "spec.template.spec.nodeSelector", {"zone": "b"})
    p = plan(old, new)
    assert p.restart_required == REDUCTION and p.vmi_patched == {"spec.nodeSelector": {"zone": "b"}}


def test_the_first_handler_message_stays() -> None:
    # u1.2xlarge: 8 sockets above the boot maximum 4, and 32Gi above maxGuest 16Gi: the CPU message stays
    assert plan(typed("u1.medium"), typed("u1.2xlarge")).restart_required == HIGHER


# -- releases: the network rules per KubeVirt release ---------------------------------------------------------

RENAMED_BLUE = ("blue", {"bridge": {}}, {"multus": {"networkName": "blue-net-2"}})
NAD_RENAMED = [{"name": "default", "pod": {}}, {"name": "blue", "multus": {"networkName": "blue-net-2"}}]


def plan_as(version: str, old: dict[str, Any], new: dict[str, Any], migratable: bool = True,
            gates: tuple[str, ...] = ()) -> Plan:
    settings = settings_as(version, feature_gates=gates)
    source = load_catalog(default_namespace="apps")
    started = start_vm(old, source, settings)
    condition = {"type": "LiveMigratable", "status": "True" if migratable else "False"}
    vmi = merge_patch(started.vmi, {"status": {"conditions": [condition]}})
    return plan_update(Started(started.stored_vm, started.start_spec, started.source, vmi), new, settings)


def _nad_live(p: Plan) -> bool:
    """The NAD name change was applied to the VMI, without RestartRequired."""
    if p.restart_required is None and p.vmi_patched.get("spec.networks") == NAD_RENAMED:
        return True
    assert p.restart_required == GENERIC_RESTART and "spec.networks" not in p.vmi_patched
    return False


@pytest.mark.parametrize(("version", "gates", "migratable", "live"), [
    ("v1.7.4", (), True, False),  # no such rule before v1.8
    ("v1.7.4", ("LiveUpdateNADRef",), True, False),  # the gate does not exist in v1.7
    ("v1.8.4", (), True, False),  # LiveUpdateNADRef is Beta in v1.8: off unless listed
    ("v1.8.4", ("LiveUpdateNADRef",), True, True),
    ("v1.8.4", ("LiveUpdateNADRef",), False, True),  # v1.8 does not look at the VMI
    ("v1.9.0", (), False, True),  # NAD_SWAP_ALWAYS_LIVE: even on a VMI that cannot migrate
    ("main", (), False, False),  # NAD_SWAP_MIGRATABLE_ONLY
    ("main", (), True, True),
])
def test_a_nad_name_change_is_live_as_each_release_decides(version, gates, migratable, live) -> None:
    p = plan_as(version, _with_nics(POD, BLUE), _with_nics(POD, RENAMED_BLUE), migratable, gates)
    assert p.admission.allowed
    assert _nad_live(p) is live


def test_nad_swap_sides() -> None:
    assert [r.name for r in sides(NAD_SWAP_ALWAYS_LIVE)] == ["v1.8.4", "v1.9.0"]
    assert [r.name for r in sides(NAD_SWAP_MIGRATABLE_ONLY)] == ["v1.9.0", "main"]


def test_adding_a_pod_network_needs_a_restart_from_v1_8() -> None:
    before, after = sides(POD_NETWORK_ADD_RESTART)
    old, new = _with_nics(BLUE), _with_nics(BLUE, POD)
    assert plan_as(after.name, old, new).restart_required == GENERIC_RESTART
    p = plan_as(before.name, old, new)
    assert p.admission.allowed and p.restart_required is None
    assert "spec.networks" not in p.vmi_patched  # a masquerade pod NIC is not hot-plugged either: nothing happens


def test_a_hotplugged_volume_is_appended_to_disks_that_carry_their_defaults() -> None:
    old = vm(domain={"devices": {"disks": [{"name": "root"}]}})
    new = copy.deepcopy(old)
    template = new["spec"]["template"]["spec"]
    template["volumes"].append({"name": "data", "persistentVolumeClaim": {"claimName": "data", "hotpluggable": True}})
    template["domain"]["devices"]["disks"].append({"name": "data", "disk": {"bus": "scsi"}})
    patched = plan(old, new).vmi_patched
    assert patched["spec.domain.devices.disks"] == [{"name": "root", "disk": {"bus": "sata"}},
                                                    {"name": "data", "disk": {"bus": "scsi"}}]
