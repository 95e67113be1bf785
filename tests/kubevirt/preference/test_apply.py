"""Applying a preference (spec 2.6) and the submission-time effects (spec 2.7)."""
from __future__ import annotations

import copy

from instancetype_webhook.kubevirt.preference.apply import apply_preference
from instancetype_webhook.kubevirt.preference.submission import with_submission_preferences


def applied(pref, spec=None, metadata=None):
    t = {"metadata": metadata if metadata is not None else {}, "spec": spec if spec is not None else {"domain": {}}}
    apply_preference(pref, t)
    return t


def test_none_is_a_no_op():
    t = {"metadata": {}, "spec": {"domain": {}}}
    apply_preference(None, t)
    assert t == {"metadata": {}, "spec": {"domain": {}}}


def test_e12_disks_and_interfaces():
    spec = {"domain": {"devices": {
        "disks": [{"name": "root"}, {"name": "data", "disk": {"bus": "sata"}}, {"name": "cd", "cdrom": {}},
                  {"name": "lun", "lun": {}}],
        "interfaces": [{"name": "default", "masquerade": {}}, {"name": "sec", "bridge": {}, "model": "e1000e"}]}}}
    pref = {"devices": {"preferredDiskBus": "virtio", "preferredCdromBus": "sata", "preferredLunBus": "scsi",
                        "preferredDiskDedicatedIoThread": True, "preferredInterfaceModel": "virtio",
                        "preferredDiskCache": "none", "preferredDiskIO": "native",
                        "preferredDiskBlockSize": {"custom": {"logical": 512, "physical": 512}}}}
    devices = applied(pref, spec)["spec"]["domain"]["devices"]
    bs = {"custom": {"logical": 512, "physical": 512}}
    assert devices["disks"] == [
        {"name": "root", "disk": {"bus": "virtio"}, "blockSize": bs, "cache": "none", "io": "native",
         "dedicatedIOThread": True},
        {"name": "data", "disk": {"bus": "sata"}, "blockSize": bs, "cache": "none", "io": "native"},
        {"name": "cd", "cdrom": {"bus": "sata"}},
        {"name": "lun", "lun": {"bus": "scsi"}},
    ]
    assert devices["interfaces"] == [{"name": "default", "masquerade": {}, "model": "virtio"},
                                     {"name": "sec", "bridge": {}, "model": "e1000e"}]


def test_any_devices_section_gives_bare_disks_a_disk_target():
    devices = applied({"devices": {}}, {"domain": {"devices": {"disks": [{"name": "a"}]}}})["spec"]["domain"]["devices"]
    assert devices["disks"] == [{"name": "a", "disk": {}}]


def test_e13_masquerade_only_on_pod_networks_without_binding():
    spec = {"networks": [{"name": "default", "pod": {}}, {"name": "net2", "multus": {"networkName": "x"}}],
            "domain": {"devices": {"interfaces": [{"name": "default"}, {"name": "net2"},
                                                  {"name": "default", "binding": {"name": "plugin"}}]}}}
    ifaces = applied({"devices": {"preferredInterfaceMasquerade": {}}}, spec)["spec"]["domain"]["devices"]["interfaces"]
    assert ifaces == [{"name": "default", "masquerade": {}}, {"name": "net2"},
                      {"name": "default", "binding": {"name": "plugin"}}]


def test_e14_firmware_features_rng():
    pref = {"features": {"preferredSmm": {}}, "firmware": {"preferredEfi": {"secureBoot": True}},
            "devices": {"preferredRng": {}}}
    domain = applied(pref)["spec"]["domain"]
    assert domain["features"] == {"smm": {}}  # acpi {} is added when the VM is printed (expand)
    assert domain["firmware"] == {"bootloader": {"efi": {"secureBoot": True}}}
    assert domain["devices"]["rng"] == {}
    bios = applied(pref, {"domain": {"firmware": {"bootloader": {"bios": {}}}}})["spec"]["domain"]["firmware"]
    assert bios == {"bootloader": {"bios": {}}}


def test_firmware_section_always_creates_a_bootloader_and_deprecated_fields():
    assert applied({"firmware": {}})["spec"]["domain"]["firmware"] == {"bootloader": {}}
    fw = applied({"firmware": {"preferredUseEfi": True, "preferredUseSecureBoot": True}})["spec"]["domain"]["firmware"]
    assert fw == {"bootloader": {"efi": {"secureBoot": True}}}
    fw = applied({"firmware": {"preferredUseBios": True, "preferredUseBiosSerial": True}})["spec"]["domain"]["firmware"]
    assert fw == {"bootloader": {"bios": {"useSerial": True}}}


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


def test_hyperv_is_merged_field_by_field_and_go_shape_is_kept():
    spec = {"domain": {"features": {"hyperv": {"relaxed": {"enabled": False}}}}}
    pref = {"features": {"preferredHyperv": {"relaxed": {}, "vapic": {}, "vendorid": {"vendorId": ""}},
                         "preferredApic": {"endOfInterrupt": False}, "preferredKvm": {"hidden": False}}}
    features = applied(pref, spec)["spec"]["domain"]["features"]
    assert features == {"hyperv": {"relaxed": {"enabled": False}, "vapic": {}, "vendorid": {}}, "apic": {}, "kvm": {}}
    passthrough = {"domain": {"features": {"hypervPassthrough": {"enabled": True}}}}
    assert "hyperv" not in applied(pref, passthrough)["spec"]["domain"]["features"]


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


def test_sound_video_inputs_panic_tpm():
    spec = {"domain": {"devices": {"sound": {"name": "s"}, "inputs": [{"name": "i", "type": "tablet"}],
                                   "panicDevices": [{}, {"model": "isa"}]}}}
    pref = {"devices": {"preferredSoundModel": "ich9", "preferredVideoType": "virtio", "preferredInputBus": "usb",
                        "preferredInputType": "keyboard", "preferredPanicDeviceModel": "hyperv",
                        "preferredTPM": {"persistent": True}, "preferredUseVirtioTransitional": False,
                        "preferredBlockMultiQueue": True, "preferredNetworkInterfaceMultiQueue": True}}
    devices = applied(pref, spec)["spec"]["domain"]["devices"]
    assert devices["sound"] == {"name": "s", "model": "ich9"}
    assert devices["video"] == {"type": "virtio"}
    assert devices["inputs"] == [{"name": "i", "type": "tablet", "bus": "usb"}]
    assert devices["panicDevices"] == [{"model": "hyperv"}, {"model": "isa"}]
    assert devices["tpm"] == {"persistent": True}
    assert devices["useVirtioTransitional"] is False and devices["blockMultiQueue"] is True
    assert devices["networkInterfaceMultiqueue"] is True
    assert applied({"devices": {"preferredPanicDeviceModel": "isa"}})["spec"]["domain"]["devices"]["panicDevices"] == [
        {"model": "isa"}]
    assert "sound" not in applied({"devices": {"preferredSoundModel": "ich9"}})["spec"]["domain"]["devices"]


def test_annotations_fill_missing_keys_only():
    t = applied({"annotations": {"a": "1", "b": "2"}}, metadata={"annotations": {"a": "0"}})
    assert t["metadata"]["annotations"] == {"a": "0", "b": "2"}


def test_submission_effects():
    vm = {"spec": {"template": {"spec": {"domain": {}}}, "dataVolumeTemplates": [
        {"spec": {"pvc": {}, "storage": {"storageClassName": "mine"}}},
        {"spec": {"storage": {"storageClassName": None}}}]}}
    before = copy.deepcopy(vm)
    out = with_submission_preferences(vm,
                                      {"preferredArchitecture": "arm64", "machine": {"preferredMachineType": "virt"},
                                           "volumes": {"preferredStorageClassName": "fast"}})
    assert vm == before  # never changed in place
    assert out["spec"]["template"]["spec"]["architecture"] == "arm64"
    assert out["spec"]["template"]["spec"]["domain"]["machine"] == {"type": "virt"}
    assert out["spec"]["dataVolumeTemplates"] == [
        {"spec": {"pvc": {"storageClassName": "fast"}, "storage": {"storageClassName": "mine"}}},
        {"spec": {"storage": {"storageClassName": "fast"}}}]
    untouched = {"spec": {"template": {"spec": {"architecture": "s390x", "domain": {"machine": {"type": "q35"}}}},
                          "dataVolumeTemplates": [{"spec": {"storage": {"storageClassName": ""}}}]}}
    prefs = {"preferredArchitecture": "arm64", "machine": {"preferredMachineType": "virt"},
             "volumes": {"preferredStorageClassName": "fast"}}
    assert with_submission_preferences(untouched, prefs) is untouched  # set values (even "") are kept


def test_submission_without_template_only_touches_data_volume_templates():
    vm = {"spec": {"dataVolumeTemplates": [{"spec": {"pvc": {}}}]}}
    out = with_submission_preferences(vm,
                                      {"preferredArchitecture": "arm64", "machine": {"preferredMachineType": "virt"},
                                           "volumes": {"preferredStorageClassName": "fast"}})
    assert out == {"spec": {"dataVolumeTemplates": [{"spec": {"pvc": {"storageClassName": "fast"}}}]}}
    assert with_submission_preferences(vm, {"preferredArchitecture": "arm64"}) is vm
    assert with_submission_preferences(vm, None) is vm
