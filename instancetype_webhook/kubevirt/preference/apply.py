"""Applying a preference to a VMI spec (upstream `pkg/instancetype/preference/apply`).

    apply_preference(preference_spec, template) -> None
    as_release_applies(preference_spec, template, release) -> the preference `release` effectively applies

`template` is `{"metadata": ..., "spec": <VMI spec>}`, mutated in place. A preference only fills in
unset values (Go zero values), except `preferredDisableHotplug` and `preferredAcpi` (always overwrite)
and the empty `firmware.bootloader` / `features` / `clock` objects its sections create. Group order:
CPU, devices, features, firmware, machine, clock, subdomain, termination grace period, architecture,
annotations, launch security.
"""
from __future__ import annotations

from typing import Any

from instancetype_webhook.kubevirt.goshape import CPU_FEATURE, LAUNCH_SECURITY, TIMER, go_clone
from instancetype_webhook.kubevirt.preference.devices import apply_device_preferences
from instancetype_webhook.kubevirt.preference.features import apply_feature_preferences
from instancetype_webhook.kubevirt.preference.firmware import apply_firmware_preferences
from instancetype_webhook.kubevirt.releases import PANIC_DEVICE_CREATION, ReleaseProfile


def apply_preference(preference: dict[str, Any] | None, template: dict[str, Any]) -> None:
    if preference is None:
        return
    spec = template.setdefault("spec", {})
    domain = spec.setdefault("domain", {})
    _apply_cpu_features(preference.get("cpu"), domain)
    if preference.get("devices") is not None:
        apply_device_preferences(preference["devices"], spec)
    if preference.get("features") is not None:
        apply_feature_preferences(preference["features"], domain)
    if preference.get("firmware") is not None:
        apply_firmware_preferences(preference["firmware"], domain)
    _apply_machine(preference.get("machine"), domain)
    if preference.get("clock") is not None:
        _apply_clock(preference["clock"], domain)
    if preference.get("preferredSubdomain") and not spec.get("subdomain"):
        spec["subdomain"] = preference["preferredSubdomain"]
    grace = preference.get("preferredTerminationGracePeriodSeconds")
    if grace is not None and spec.get("terminationGracePeriodSeconds") is None:
        spec["terminationGracePeriodSeconds"] = grace
    if preference.get("preferredArchitecture") and not spec.get("architecture"):
        spec["architecture"] = preference["preferredArchitecture"]
    if preference.get("annotations"):
        apply_preference_annotations(preference["annotations"], template.setdefault("metadata", {}))
    if preference.get("preferredLaunchSecurity") is not None and domain.get("launchSecurity") is None:
        domain["launchSecurity"] = go_clone(preference["preferredLaunchSecurity"], LAUNCH_SECURITY)


def as_release_applies(preference: dict[str, Any] | None, template: dict[str, Any],
                       release: ReleaseProfile) -> dict[str, Any] | None:
    """The preference that `apply_preference` (main's rules) must be given so that the template comes out as
    `release` applies `preference` to it. Before v1.9 (`PANIC_DEVICE_CREATION`) `preferredPanicDeviceModel`
    only filled in the model of panic devices the VM lists: with none listed it did nothing, so it is left
    out; with some listed both rules fill them in. Call it just before `apply_to_template`, on its template."""
    if preference is None or release.has(PANIC_DEVICE_CREATION):
        return preference
    devices = preference.get("devices")
    if not isinstance(devices, dict) or devices.get("preferredPanicDeviceModel") is None:
        return preference
    listed = (((template.get("spec") or {}).get("domain") or {}).get("devices") or {}).get("panicDevices")
    if listed:
        return preference
    trimmed = {k: v for k, v in devices.items() if k != "preferredPanicDeviceModel"}
    return {**preference, "devices": trimmed}


def _apply_cpu_features(cpu_prefs: dict[str, Any] | None, domain: dict[str, Any]) -> None:
    wanted = (cpu_prefs or {}).get("preferredCPUFeatures")
    if not wanted:
        return
    cpu = dict(domain.get("cpu") or {})
    features = list(cpu.get("features") or [])
    names = {f.get("name") for f in features}
    features.extend(go_clone(f, CPU_FEATURE) for f in wanted if f.get("name") not in names)
    cpu["features"] = features
    domain["cpu"] = cpu


def _apply_machine(machine_prefs: dict[str, Any] | None, domain: dict[str, Any]) -> None:
    if machine_prefs is None:
        return
    machine = dict(domain.get("machine") or {})  # created even without a preferred type, as upstream
    wanted = machine_prefs.get("preferredMachineType")
    if wanted and not machine.get("type"):
        machine["type"] = wanted
    domain["machine"] = machine


def _apply_clock(clock_prefs: dict[str, Any], domain: dict[str, Any]) -> None:
    clock = dict(domain.get("clock") or {})
    domain["clock"] = clock
    offset = clock_prefs.get("preferredClockOffset")
    if offset is not None and clock.get("utc") is None and clock.get("timezone") is None:
        clock.update(go_clone(offset))
    if clock_prefs.get("preferredTimer") is not None and clock.get("timer") is None:
        clock["timer"] = go_clone(clock_prefs["preferredTimer"], TIMER)


def apply_preference_annotations(annotations: dict[str, str] | None, metadata: dict[str, Any]) -> None:
    """Add keys the VM does not have; never a conflict."""
    if not annotations:
        return
    current = metadata.get("annotations") or {}
    missing = {k: v for k, v in annotations.items() if k not in current}
    if missing:
        metadata["annotations"] = {**current, **missing}
