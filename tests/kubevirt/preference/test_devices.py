"""Preference devices (spec 2.6; kubevirt.preference.devices): disks, interfaces and the other devices are filled in
only where the VM leaves them unset."""
from __future__ import annotations

from instancetype_webhook.kubevirt.preference.devices import (
    apply_autoattach_preferences,
    apply_device_preferences,
    binding_unset,
    on_pod_network,
)
from tests.kit.kubevirt import applied


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


# -- the module's functions directly ------------------------------------------------------------------------
def test_binding_unset_and_pod_networks():
    assert binding_unset({"name": "a"}) and binding_unset({"name": "a", "model": "virtio"})
    assert not binding_unset({"name": "a", "passt": {}}) and not binding_unset({"name": "a", "binding": {"name": "p"}})
    networks = [{"name": "default", "pod": {}}, {"name": "other", "multus": {"networkName": "x"}}]
    assert on_pod_network("default", networks) and not on_pod_network("other", networks)
    assert not on_pod_network("missing", networks) and not on_pod_network("default", [])


def test_autoattach_preferences_fill_unset_flags_only():
    devices = {"autoattachGraphicsDevice": True}
    apply_autoattach_preferences({"preferredAutoattachGraphicsDevice": False, "preferredAutoattachSerialConsole": False,
                                  "preferredAutoattachPodInterface": None}, devices)
    assert devices == {"autoattachGraphicsDevice": True, "autoattachSerialConsole": False}


def test_video_is_created_even_for_an_empty_type_and_a_vm_type_is_kept():
    spec = {}
    apply_device_preferences({"preferredVideoType": ""}, spec)
    assert spec == {"domain": {"devices": {"video": {}}}}
    spec = {"domain": {"devices": {"video": {"type": "vga"}}}}
    apply_device_preferences({"preferredVideoType": "virtio"}, spec)
    assert spec["domain"]["devices"]["video"] == {"type": "vga"}


def test_dedicated_io_thread_only_on_virtio_disks_and_disable_hotplug_false_removes_it():
    spec = {"domain": {"devices": {"disableHotplug": True, "disks": [{"name": "a", "disk": {"bus": "sata"}},
                                                                     {"name": "b", "disk": {"bus": "virtio"}}]}}}
    apply_device_preferences({"preferredDiskDedicatedIoThread": True, "preferredDisableHotplug": False}, spec)
    assert spec["domain"]["devices"] == {"disks": [{"name": "a", "disk": {"bus": "sata"}},
                                                   {"name": "b", "disk": {"bus": "virtio"}, "dedicatedIOThread": True}]}
