"""The UPDATE of a running VM through virt-api's mutating then validating VM webhook: the matcher rule, the
instancetype conflicts, the CPU and memory hotplug checks per rollout strategy, and the VM as stored."""
from __future__ import annotations

import copy
from typing import Any

import pytest

from instancetype_webhook.kubevirt.configuration import settings_from_configuration
from instancetype_webhook.kubevirt.liveupdate.start import Started, start_vm
from instancetype_webhook.kubevirt.liveupdate.update_webhook import (
    GUEST_FIELD,
    SOCKETS_FIELD,
    TOO_MANY_SOCKETS,
    admit_update,
)
from instancetype_webhook.kubevirt.releases import MULTI_ARCHITECTURE_CHECK_REMOVED
from instancetype_webhook.sources.catalog import load_catalog
from tests.kit.builders import edited as change
from tests.kit.builders import vm as build_vm
from tests.kit.releases import settings_as, sides

STAGE = {"vmRolloutStrategy": "Stage"}


def run(vm: dict[str, Any], config: dict[str, Any] | None = None) -> Started:
    return start_vm(vm, load_catalog(default_namespace="apps"), settings_from_configuration(config))


def plain(**domain: Any) -> dict[str, Any]:
    return build_vm("web", "apps", metadata={"uid": "0b6c-web", "labels": {"a": "1"}}, run_strategy="Always",
                    template={"volumes": []},
                    domain={"devices": {}, "cpu": {"sockets": 1, "maxSockets": 2}, "memory": {"guest": "2Gi"},
                            **domain})


def typed(**matcher: Any) -> dict[str, Any]:
    return build_vm("web", "apps", metadata={"uid": "0b6c-web"}, run_strategy="Always", template={"volumes": []},
                    domain={"devices": {}}, spec={"instancetype": {"name": "u1.medium", **matcher}})


def admit(started: Started, new: dict[str, Any], config: dict[str, Any] | None = None):
    return admit_update(started.stored_vm, new, started.source, settings_from_configuration(config))


@pytest.mark.parametrize(("config", "count"), [(None, 2), (STAGE, 1)])
def test_sockets_above_max_sockets_are_refused_once_per_check(config: dict[str, Any] | None, count: int) -> None:
    started = run(plain(), config)
    answer = admit(started, change(started.stored_vm, SOCKETS_FIELD, 3), config)
    assert not answer.verdict.allowed and answer.vm is None
    assert [(c.field, c.message) for c in answer.verdict.causes] == [(SOCKETS_FIELD, TOO_MANY_SOCKETS)] * count


def test_sockets_within_max_sockets_are_admitted() -> None:
    started = run(plain())
    answer = admit(started, change(started.stored_vm, SOCKETS_FIELD, 2))
    assert answer.verdict.allowed and answer.vm["spec"]["template"]["spec"]["domain"]["cpu"]["sockets"] == 2


def test_guest_above_the_memory_limit_is_refused_under_stage_only() -> None:
    vm = plain(resources={"limits": {"memory": "3Gi"}})
    staged = run(vm, STAGE)
    answer = admit(staged, change(staged.stored_vm, GUEST_FIELD, "4Gi"), STAGE)
    assert not answer.verdict.allowed
    assert answer.verdict.message == (f"{GUEST_FIELD} '4Gi' must be equal to or less than the memory limit "
                                      "spec.template.spec.domain.resources.limits.memory '3Gi'")
    assert admit(staged, change(staged.stored_vm, GUEST_FIELD, "3Gi"), STAGE).verdict.allowed
    live = run(vm)
    assert admit(live, change(live.stored_vm, GUEST_FIELD, "4Gi")).verdict.allowed


def test_an_explicit_max_guest_is_validated_under_live_update_only() -> None:
    vm = plain(memory={"guest": "2Gi", "maxGuest": "3001Mi"})
    assert not admit(run(vm), change(run(vm).stored_vm, GUEST_FIELD, "3Gi")).verdict.allowed
    staged = run(vm, STAGE)
    assert admit(staged, change(staged.stored_vm, GUEST_FIELD, "3Gi"), STAGE).verdict.allowed


def test_a_field_the_instance_type_owns_is_refused() -> None:
    started = run(typed())
    answer = admit(started, change(started.stored_vm, "spec.template.spec.domain.cpu", {"sockets": 2}))
    assert answer.verdict.message == \
        "VM field(s) spec.template.spec.domain.cpu.sockets conflicts with selected instance type"


def test_a_matcher_name_changed_with_the_old_revision_name_is_refused_by_the_mutating_webhook() -> None:
    first = run(typed())
    pinned_name = first.stored_vm["status"]["instancetypeRef"]["controllerRevisionRef"]["name"]
    started = start_vm(typed(revisionName=pinned_name), first.source, settings_from_configuration(None))
    answer = admit(started, change(started.stored_vm, "spec.instancetype.name", "u1.large"))
    assert [(c.field, c.message) for c in answer.verdict.causes] == [
        ("spec.instancetype.revisionName", "the Matcher Name has been updated without updating the RevisionName")]
    renamed = change(started.stored_vm, "spec.instancetype", {"name": "u1.large"})
    assert admit(started, renamed).verdict.allowed


def test_a_vm_without_template_is_refused() -> None:
    started = run(plain())
    new = copy.deepcopy(started.stored_vm)
    del new["spec"]["template"]
    answer = admit(started, new)
    assert answer.verdict.code == 422 and answer.verdict.message == "missing virtual machine template."
    assert [c.field for c in answer.verdict.causes] == ["spec.template"]


def test_the_stored_vm_keeps_the_status_merges_labels_and_bumps_the_generation_on_a_spec_change() -> None:
    started = run(plain())
    relabelled = change(started.stored_vm, "metadata.labels", {"b": "2"})
    answer = admit(started, relabelled)
    assert answer.vm["metadata"]["labels"] == {"a": "1", "b": "2"} and answer.vm["metadata"]["generation"] == 1
    edited = change(started.stored_vm, "spec.template.spec.hostname", "h")
    del edited["status"]
    answer = admit(started, edited)
    assert answer.vm["metadata"]["generation"] == 2 and answer.vm["status"] == started.stored_vm["status"]
    assert answer.vm["spec"]["template"]["spec"]["hostname"] == "h"


# -- releases: the feature gate checks of the VM spec validation ------------------------------------------------

PANIC_REFUSAL = ("spec.template.spec.domain.devices.panicDevices",
                 "Panic Devices feature gate is not enabled in kubevirt-config")


def _admitted_as(version: str, new: dict[str, Any], gates: tuple[str, ...] = (),
                 configuration: dict[str, Any] | None = None) -> Any:
    settings = settings_as(version, configuration, gates)
    started = start_vm(plain(), load_catalog(default_namespace="apps"), settings)
    return admit_update(started.stored_vm, new, started.source, settings).verdict


def _causes(verdict: Any) -> list[tuple[str, str]]:
    return [(c.field, c.message) for c in verdict.causes]


@pytest.mark.parametrize(("version", "gates", "refused"), [
    ("v1.8.4", (), True),  # PanicDevices is Beta before v1.9: off unless listed
    ("v1.8.4", ("PanicDevices",), False),
    ("v1.9.0", (), False),  # GA
])
def test_a_listed_panic_device_needs_the_panic_devices_gate_before_v1_9(version, gates, refused) -> None:
    new = change(plain(), "spec.template.spec.domain.devices.panicDevices", [{"model": "hyperv"}])
    verdict = _admitted_as(version, new, gates)
    assert verdict.allowed is not refused
    if refused:
        assert _causes(verdict) == [PANIC_REFUSAL] and verdict.code == 422


def test_a_preferred_panic_device_model_without_a_listed_device_is_admitted_on_v1_8() -> None:
    """C3: v1.8 creates no panic device from the preference, so the VM needs no gate."""
    pref = {"kind": "VirtualMachineClusterPreference", "metadata": {"name": "panicky"},
            "spec": {"devices": {"preferredPanicDeviceModel": "hyperv"}}}
    settings = settings_as("v1.8.4")
    started = start_vm(plain(), load_catalog(default_namespace="apps"), settings)
    started.source.base.add(pref)
    new = {**plain(), "spec": {**plain()["spec"], "preference": {"name": "panicky"}}}
    assert admit_update(started.stored_vm, new, started.source, settings).verdict.allowed
    listed = change(new, "spec.template.spec.domain.devices.panicDevices", [{}])
    verdict = admit_update(started.stored_vm, listed, started.source, settings).verdict
    assert not verdict.allowed and _causes(verdict) == [PANIC_REFUSAL]


MULTI_ARCH_REFUSAL = ("spec.template.spec.architecture", "MultiArchitecture feature gate is not enabled in "
                      "kubevirt-config, invalid entry spec.template.spec.architecture")


@pytest.mark.parametrize(("version", "gates", "refused"), [
    ("v1.7.4", (), True),
    ("v1.7.4", ("MultiArchitecture",), False),
    ("v1.8.0", (), False),  # B5: the check is gone (the gate deprecated)
])
def test_another_architecture_than_virt_api_s_needs_multi_architecture_before_v1_8(version, gates, refused) -> None:
    before, after = sides(MULTI_ARCHITECTURE_CHECK_REMOVED)
    assert (before.name, after.name) == ("v1.7.4", "v1.8.0")
    new = change(plain(), "spec.template.spec.architecture", "arm64")
    verdict = _admitted_as(version, new, gates)
    assert verdict.allowed is not refused
    if refused:
        assert _causes(verdict) == [MULTI_ARCH_REFUSAL] and verdict.causes[0].reason == "FieldValueRequired"
    assert _admitted_as(version, change(plain(), "spec.template.spec.architecture", "amd64")).allowed
