"""Applying a preference (spec 2.6; kubevirt.preference.apply): the groups in order, and what it fills in itself
(CPU features, machine, clock, subdomain, grace period, architecture, annotations, launch security)."""
from __future__ import annotations

from instancetype_webhook.kubevirt.preference.apply import apply_preference
from tests.kit.kubevirt import applied


def test_none_is_a_no_op():
    t = {"metadata": {}, "spec": {"domain": {}}}
    apply_preference(None, t)
    assert t == {"metadata": {}, "spec": {"domain": {}}}


def test_e14_firmware_features_rng():
    pref = {"features": {"preferredSmm": {}}, "firmware": {"preferredEfi": {"secureBoot": True}},
            "devices": {"preferredRng": {}}}
    domain = applied(pref)["spec"]["domain"]
    assert domain["features"] == {"smm": {}}  # acpi {} is added when the VM is printed (expand)
    assert domain["firmware"] == {"bootloader": {"efi": {"secureBoot": True}}}
    assert domain["devices"]["rng"] == {}
    bios = applied(pref, {"domain": {"firmware": {"bootloader": {"bios": {}}}}})["spec"]["domain"]["firmware"]
    assert bios == {"bootloader": {"bios": {}}}


def test_overwrites_acpi_and_disable_hotplug_but_nothing_else():
    spec = {"domain": {"features": {"acpi": {"enabled": False}, "smm": {"enabled": False}},
                       "devices": {"disableHotplug": False, "rng": {"x": 1}, "autoattachGraphicsDevice": True}}}
    pref = {"features": {"preferredAcpi": {}, "preferredSmm": {}},
            "devices": {"preferredDisableHotplug": True, "preferredRng": {}, "preferredAutoattachGraphicsDevice": False,
                        "preferredAutoattachMemBalloon": False}}
    domain = applied(pref, spec)["spec"]["domain"]
    assert domain["features"] == {"acpi": {}, "smm": {"enabled": False}}
    assert domain["devices"] == {"disableHotplug": True, "rng": {"x": 1}, "autoattachGraphicsDevice": True,
                                 "autoattachMemBalloon": False}


def test_clock_never_partially_merges():
    pref = {"clock": {"preferredClockOffset": {"utc": {}},
                      "preferredTimer": {"hpet": {"present": False, "tickPolicy": ""}}}}
    assert applied(pref)["spec"]["domain"]["clock"] == {"utc": {}, "timer": {"hpet": {"present": False}}}
    kept = applied(pref, {"domain": {"clock": {"timezone": "Europe/Paris", "timer": {}}}})["spec"]["domain"]["clock"]
    assert kept == {"timezone": "Europe/Paris", "timer": {}}


def test_cpu_features_machine_subdomain_grace_arch_launch_security():
    spec = {"domain": {"cpu": {"features": [{"name": "vmx", "policy": "disable"}]}}, "terminationGracePeriodSeconds": 0}
    pref = {"cpu": {"preferredCPUFeatures": [{"name": "vmx", "policy": "require"}, {"name": "pcid", "policy": ""}]},
            "machine": {"preferredMachineType": "pc-q35-rhel9.4.0"}, "preferredSubdomain": "sub",
            "preferredTerminationGracePeriodSeconds": 3600, "preferredArchitecture": "arm64",
            "preferredLaunchSecurity": {"sev": {}}}
    out = applied(pref, spec)["spec"]
    assert out["domain"]["cpu"]["features"] == [{"name": "vmx", "policy": "disable"}, {"name": "pcid"}]
    assert out["domain"]["machine"] == {"type": "pc-q35-rhel9.4.0"}
    assert out["subdomain"] == "sub" and out["terminationGracePeriodSeconds"] == 0 and out["architecture"] == "arm64"
    assert out["domain"]["launchSecurity"] == {"sev": {}}
    assert applied({"cpu": {"preferredCPUFeatures": [{"name": "x"}]}}, {})["spec"]["domain"]["cpu"] == {
        "features": [{"name": "x"}]}  # no cpu in the VM: created instead of upstream's nil dereference


def test_annotations_fill_missing_keys_only():
    t = applied({"annotations": {"a": "1", "b": "2"}}, metadata={"annotations": {"a": "0"}})
    assert t["metadata"]["annotations"] == {"a": "0", "b": "2"}
