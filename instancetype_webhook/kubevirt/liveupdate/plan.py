"""The planner: what virt-api and virt-controller do when a running VM is edited (no I/O).

    plan_update(started, new_vm, settings) -> Plan

`started` is the VM as it runs (`Started`: the stored VM with its status refs, the spec it started with,
the source with its ControllerRevisions, the running VMI), from a cluster or from `start_vm`. Steps,
as upstream runs them:
1. the UPDATE's admission (`admit_update`); a refusal ends the plan;
2. the instancetype sync: the referenced objects must exist (else sync error `FailedFindInstancetype` /
   `FailedFindPreference`, and nothing else happens), then `Store` updates the status refs: a changed
   matcher name or kind drops the old ControllerRevision for one of the live object, an explicit
   `revisionName` wins;
3. `syncRestartRequired`: the generic message when a non-live field changed;
4. the network synchronizer (both strategies, restart or not: NIC hotplug and unplug, `netsync`) and
   declarative volume hotplug (`volumes`, same conditions);
   then, under LiveUpdate and when no restart is pending, the CPU, affinity, tolerations and memory
   handlers against the running VMI;
5. the hotplug conditions the VMI controller then adds to the patched VMI.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from instancetype_webhook.kubevirt.causes import ExpandError, Verdict
from instancetype_webhook.kubevirt.configuration import DEFAULT_CONFIGURATION, ClusterSettings
from instancetype_webhook.kubevirt.find import find_instancetype_spec, find_preference_spec
from instancetype_webhook.kubevirt.jsondata import clone_tree
from instancetype_webhook.kubevirt.liveupdate.handlers import (
    Sync,
    handle_affinity,
    handle_cpu,
    handle_memory,
    handle_tolerations,
    hotplug_conditions,
)
from instancetype_webhook.kubevirt.liveupdate.hotplug import is_live_update
from instancetype_webhook.kubevirt.liveupdate.model import GENERIC_RESTART, Plan, SyncError
from instancetype_webhook.kubevirt.liveupdate.netsync import network_patch
from instancetype_webhook.kubevirt.liveupdate.restart import expanded_template_spec, restart_required
from instancetype_webhook.kubevirt.liveupdate.revisions import FAMILIES, LayeredSource, controller_revision
from instancetype_webhook.kubevirt.liveupdate.semantic import semantic_equal
from instancetype_webhook.kubevirt.liveupdate.start import Started
from instancetype_webhook.kubevirt.liveupdate.update_webhook import admit_update
from instancetype_webhook.kubevirt.liveupdate.volumes import declarative_hotplug_enabled, volume_patch
from instancetype_webhook.kubevirt.releases import MAIN_PROFILE, ReleaseProfile
from instancetype_webhook.kubevirt.source import KindNotServed


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def configuration_of(settings: ClusterSettings) -> Mapping[str, Any]:
    return settings.configuration or DEFAULT_CONFIGURATION


def _allocation_ratio(configuration: Mapping[str, Any]) -> int:
    raw = _obj(configuration.get("developerConfiguration")).get("cpuAllocationRatio")
    return raw if isinstance(raw, int) and not isinstance(raw, bool) and raw > 0 else 10


def _missing_object(vm: dict[str, Any], source: LayeredSource, release: ReleaseProfile) -> SyncError | None:
    """checkResourcesExist: the instance type, then the preference, must be found (a ControllerRevision decoded
    as `release` decodes it: its errors name that release's scheme)."""
    for find, reason in ((find_instancetype_spec, "FailedFindInstancetype"),
                         (find_preference_spec, "FailedFindPreference")):
        try:
            find(vm, source, release)
        except ExpandError as exc:
            return SyncError(reason, exc.message)
        except KindNotServed as unserved:
            return SyncError(reason, str(unserved))
    return None


def _same_ref(matcher: dict[str, Any], ref: dict[str, Any], family_kind: str) -> bool:
    return (matcher.get("name") == ref.get("name") and family_kind == ref.get("kind")
            and matcher.get("inferFromVolume") == ref.get("inferFromVolume"))


STORE_ERROR: Final = "error encountered while storing instancetype.kubevirt.io controllerRevisions: "


def store(vm: dict[str, Any], source: LayeredSource) -> tuple[dict[str, Any], SyncError | None]:
    """revision.Store on the updated VM: its status refs after the sync (new revisions go into `source`), or
    the sync error when a revision of that name already exists with other data."""
    spec, status = _obj(vm.get("spec")), dict(_obj(vm.get("status")))
    namespace = str(_obj(vm.get("metadata")).get("namespace") or source.default_namespace)
    for family, key in FAMILIES:
        matcher = spec.get(key)
        if not isinstance(matcher, dict):
            status.pop(family.status_key, None)
            continue
        kind = family.resolve_kind(str(matcher.get("kind") or ""))
        ref = dict(_obj(status.get(family.status_key)))
        if not _same_ref(matcher, ref, kind):
            ref = {"name": matcher.get("name", ""), "kind": kind}
        if matcher.get("revisionName"):
            ref["controllerRevisionRef"] = {"name": matcher["revisionName"]}
        elif not _obj(ref.get("controllerRevisionRef")).get("name"):
            obj = source.get(kind, str(matcher.get("name") or ""), namespace)
            if obj is not None:
                revision = controller_revision(vm, kind, {**obj, "kind": kind})
                name = revision["metadata"]["name"]
                existing = source.get_revision(name, namespace)
                if existing is not None and not semantic_equal(_obj(existing.get("data")).get("spec"),
                                                               revision["data"]["spec"]):
                    return vm, SyncError("FailedCreate",
                                         f"{STORE_ERROR}found existing ControllerRevision with unexpected data: {name}")
                source.revisions.setdefault(name, existing or revision)
                ref["controllerRevisionRef"] = {"name": name}
        status[family.status_key] = ref
    return {**vm, "status": status}, None


def _start_vm(started: Started, current: dict[str, Any]) -> dict[str, Any]:
    """The VM as it started: the current metadata (for the lookups) with the VM-start spec."""
    return {"metadata": current.get("metadata") or {}, "spec": started.start_spec}


def plan_update(started: Started, new_vm: dict[str, Any], settings: ClusterSettings, templates: bool = True) -> Plan:
    """What happens when the running VM `started` is edited to `new_vm` (`templates`: also fill in
    `Plan.before`/`after`, the expanded templates a report compares; the webhook does without)."""
    source = LayeredSource(started.source.base, dict(started.source.revisions))
    before = expanded_template_spec(started.stored_vm, source, settings.release) if templates else None
    plan = _plan(started, new_vm, settings, source, templates)
    plan.before = before
    return plan


def _plan(started: Started, new_vm: dict[str, Any], settings: ClusterSettings, source: LayeredSource,
          templates: bool) -> Plan:
    admitted = admit_update(started.stored_vm, new_vm, source, settings)
    if admitted.vm is None:
        after = expanded_template_spec(_with_status(new_vm, started), source, settings.release) if templates else None
        return Plan(admitted.verdict, after=after)
    plan = _sync(started, admitted.vm, configuration_of(settings), source, settings.release)
    plan.admission = admitted.verdict
    if not templates:
        plan.after = None
    return plan


def _sync(started: Started, current: dict[str, Any], configuration: Mapping[str, Any], source: LayeredSource,
          release: ReleaseProfile = MAIN_PROFILE) -> Plan:
    """virt-controller's VM sync of the stored update `current`, with the running VMI (steps 2 to 5)."""
    missing = _missing_object(current, source, release)
    if missing is not None:
        return Plan(Verdict.allow(), sync_error=missing)
    current, failed = store(current, source)
    if failed is not None:
        return Plan(Verdict.allow(), sync_error=failed)
    live = is_live_update(configuration)
    vmi = clone_tree(started.vmi)
    expanded = expanded_template_spec(current, source, release)
    restart = restart_required(_start_vm(started, current), current, vmi, source, live, expanded,
                               release, configuration)
    sync = Sync(vmi, _allocation_ratio(configuration), restart=GENERIC_RESTART if restart else None)
    if _vmi_deleting(vmi):
        return Plan(Verdict.allow(), sync.restart, after=expanded)
    _synchronize_devices(current, configuration, sync, release)
    error = _run_handlers(expanded, sync) if live and not restart else None
    return Plan(Verdict.allow(), sync.restart, sync.patched, hotplug_conditions(sync.vmi), error, after=expanded)


def _synchronize_devices(current: dict[str, Any], configuration: Mapping[str, Any], sync: Sync,
                         release: ReleaseProfile = MAIN_PROFILE) -> None:
    """The synchronizers that run under both strategies, restart or not, on the VM as stored: NICs, volumes."""
    template_spec = _obj(_obj(_obj(current.get("spec")).get("template")).get("spec"))
    for path, value in network_patch(template_spec, sync.vmi, release, configuration).items():
        sync.set(path, value)
    if declarative_hotplug_enabled(configuration, release):
        migration = _obj(current.get("spec")).get("updateVolumesStrategy") == "Migration"
        for path, value in volume_patch(template_spec, sync.vmi, migration).items():
            sync.set(path, value)


def _with_status(vm: dict[str, Any], started: Started) -> dict[str, Any]:
    if vm.get("status") is None and started.stored_vm.get("status") is not None:
        return {**vm, "status": started.stored_vm["status"]}
    return vm


def _vmi_deleting(vmi: dict[str, Any]) -> bool:
    return bool(_obj(vmi.get("metadata")).get("deletionTimestamp"))


def _run_handlers(expanded: dict[str, Any] | None, sync: Sync) -> SyncError | None:
    if expanded is None:
        return None
    for handler in (handle_cpu, handle_affinity, handle_tolerations, handle_memory):
        error = handler(expanded, sync)
        if error is not None:
            return error
    return None
