"""Preference devices (spec 2.6; kubevirt.preference.devices): disks, interfaces and the other devices are filled in
only where the VM leaves them unset."""
from __future__ import annotations

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
