"""Unit tests per builder with literal expected XML (the way Nova tests its libvirt config classes)."""
from __future__ import annotations

import pytest

from instancetype_webhook.domxml import DomainError, LauncherContext
from instancetype_webhook.domxml.clock import clock_element
from instancetype_webhook.domxml.controllers import controller_elements
from instancetype_webhook.domxml.cpu import cpu_element, vcpu_elements
from instancetype_webhook.domxml.devices import (
    channel_elements,
    console_elements,
    graphics_elements,
    input_elements,
    memballoon_element,
    rng_elements,
    sound_elements,
    tpm_elements,
    video_elements,
    watchdog_elements,
)
from instancetype_webhook.domxml.disks import disk_elements, letters
from instancetype_webhook.domxml.features import features_element
from instancetype_webhook.domxml.hostdevices import hostdev_elements, resource_variable
from instancetype_webhook.domxml.interfaces import interface_elements
from instancetype_webhook.domxml.iothreads import iothreads_element, plan_iothreads
from instancetype_webhook.domxml.launchsecurity import launch_security_element
from instancetype_webhook.domxml.memory import memory_backing, memory_elements
from instancetype_webhook.domxml.os import os_element
from instancetype_webhook.domxml.pinning import NumaPassthrough, Pinning
from instancetype_webhook.domxml.sysinfo import sysinfo_element
from tests.kit.domxml import FW_UUID, UID, assert_xml, conversion, make_vmi

POD = [{"name": "default", "pod": {}}]


# -- memory ------------------------------------------------------------------------------------------------

def test_memory_in_bytes_with_hotplug_maximum():
    conv = conversion(make_vmi({"memory": {"guest": "2Gi"}}))
    assert_xml(memory_elements(conv), '<memory unit="b">2147483648</memory>'
                                      '<maxMemory unit="b" slots="0">8589934592</maxMemory>')


def test_memory_below_1gi_gets_no_hotplug_maximum():
    conv = conversion(make_vmi({"memory": {"guest": "512Mi"}}))
    assert_xml(memory_elements(conv), '<memory unit="b">536870912</memory>')
    assert memory_backing(conv) is None


def test_memory_from_requests_and_fractional_bytes_floored():
    conv = conversion(make_vmi({"memory": {}, "resources": {"requests": {"memory": "1.5"}}}))
    assert_xml(memory_elements(conv), '<memory unit="b">1</memory>')


def test_hugepages_use_memfd_without_page_size():
    conv = conversion(make_vmi({"memory": {"guest": "4Gi", "hugepages": {"pageSize": "2Mi"}}}))
    assert_xml(memory_backing(conv), '<memoryBacking><hugepages/><source type="memfd"/></memoryBacking>')


def test_memfd_annotation_off_keeps_hugepages_only():
    conv = conversion(make_vmi({"memory": {"guest": "4Gi", "hugepages": {"pageSize": "2Mi"}}},
                               annotations={"kubevirt.io/memfd": "false"}))
    assert_xml(memory_backing(conv), '<memoryBacking><hugepages/></memoryBacking>')


# -- cpu ---------------------------------------------------------------------------------------------------

def test_cpu_default_host_model_and_hotplug_vcpus():
    conv = conversion(make_vmi({"cpu": {"sockets": 1, "cores": 2, "threads": 1}}))
    assert_xml(cpu_element(conv), '<cpu mode="host-model"><topology sockets="4" cores="2" threads="1"/></cpu>')
    assert_xml(vcpu_elements(conv), '<vcpu placement="static">8</vcpu><vcpus>'
               '<vcpu id="0" enabled="yes" hotpluggable="no"/><vcpu id="1" enabled="yes" hotpluggable="no"/>'
               '<vcpu id="2" enabled="no" hotpluggable="yes"/><vcpu id="3" enabled="no" hotpluggable="yes"/>'
               '<vcpu id="4" enabled="no" hotpluggable="yes"/><vcpu id="5" enabled="no" hotpluggable="yes"/>'
               '<vcpu id="6" enabled="no" hotpluggable="yes"/><vcpu id="7" enabled="no" hotpluggable="yes"/>'
               '</vcpus>')


def test_cpu_named_model_disables_mpx_after_user_features():
    conv = conversion(make_vmi({"cpu": {"model": "Haswell-noTSX",
                                        "features": [{"name": "pcid", "policy": "require"}]}}))
    assert_xml(cpu_element(conv), '<cpu mode="custom"><model>Haswell-noTSX</model>'
               '<feature name="pcid" policy="require"/><feature name="mpx" policy="disable"/>'
               '<topology sockets="4" cores="1" threads="1"/></cpu>')


def test_cpu_topology_from_cpu_limit_without_hotplug_when_max_sockets_set():
    conv = conversion(make_vmi({"cpu": {"maxSockets": 3}, "resources": {"limits": {"cpu": "3"}}}))
    assert_xml(cpu_element(conv), '<cpu mode="host-model"><topology sockets="3" cores="1" threads="1"/></cpu>')


def test_hugepages_add_synthetic_numa_cell_over_all_vcpus():
    conv = conversion(make_vmi({"cpu": {"sockets": 2}, "memory": {"guest": "4Gi", "hugepages": {"pageSize": "1Gi"}}}))
    assert_xml(cpu_element(conv), '<cpu mode="host-model"><topology sockets="8" cores="1" threads="1"/>'
               '<numa><cell id="0" cpus="0-7" memory="4194304" unit="KiB"/></numa></cpu>')


# -- os / sysinfo ------------------------------------------------------------------------------------------

def test_os_bios_default():
    assert_xml(os_element(conversion(make_vmi())),
               '<os><type arch="x86_64" machine="q35">hvm</type><smbios mode="sysinfo"/></os>')


def test_os_efi_secure_boot_uses_secboot_pair_and_nonroot_nvram():
    conv = conversion(make_vmi({"firmware": {"uuid": FW_UUID, "bootloader": {"efi": {}}}}))
    assert_xml(os_element(conv), '<os><type arch="x86_64" machine="q35">hvm</type><smbios mode="sysinfo"/>'
               '<loader readonly="yes" secure="yes" type="pflash">/usr/share/edk2/ovmf/OVMF_CODE.secboot.fd</loader>'
               '<nvram template="/usr/share/edk2/ovmf/OVMF_VARS.secboot.fd">'
               '/var/run/kubevirt-private/libvirt/qemu/nvram/vm1_VARS.fd</nvram></os>')


def test_os_efi_without_secure_boot_falls_back_to_secboot_code():
    conv = conversion(make_vmi({"firmware": {"uuid": FW_UUID, "bootloader": {"efi": {"secureBoot": False}}}}),
                      LauncherContext(root_launcher=True))
    assert_xml(os_element(conv), '<os><type arch="x86_64" machine="q35">hvm</type><smbios mode="sysinfo"/>'
               '<loader readonly="yes" secure="no" type="pflash">/usr/share/edk2/ovmf/OVMF_CODE.secboot.fd</loader>'
               '<nvram template="/usr/share/edk2/ovmf/OVMF_VARS.fd">'
               '/var/lib/libvirt/qemu/nvram/vm1_VARS.fd</nvram></os>')


def test_os_paused_boot_menu_serial_bios_and_kernel_args():
    conv = conversion(make_vmi({"firmware": {"uuid": FW_UUID, "bootloader": {"bios": {"useSerial": True}},
                                             "kernelBoot": {"kernelArgs": "console=ttyS0"}}}, startStrategy="Paused"))
    assert_xml(os_element(conv), '<os><type arch="x86_64" machine="q35">hvm</type><smbios mode="sysinfo"/>'
               '<bootmenu enable="yes" timeout="10000"/><bios useserial="yes"/><cmdline>console=ttyS0</cmdline></os>')


def test_os_acpi_table_must_come_from_a_secret():
    vmi = make_vmi({"firmware": {"uuid": FW_UUID, "acpi": {"slicNameRef": "slic"}}},
                   volumes=[{"name": "slic", "configMap": {"name": "x"}}])
    with pytest.raises(DomainError, match="unsupported for slic"):
        os_element(conversion(vmi))


def test_sysinfo_uuid_serial_smbios_and_chassis():
    vmi = make_vmi({"firmware": {"uuid": FW_UUID, "serial": "S1"}, "chassis": {"asset": "A7"}})
    assert_xml(sysinfo_element(conversion(vmi)), f'<sysinfo type="smbios"><system>'
               f'<entry name="uuid">{FW_UUID}</entry><entry name="serial">S1</entry>'
               '<entry name="manufacturer">KubeVirt</entry><entry name="family">KubeVirt</entry>'
               '<entry name="product">None</entry><entry name="sku"></entry><entry name="version"></entry>'
               '</system><bios/><baseBoard/><chassis><entry name="manufacturer"></entry><entry name="version"></entry>'
               '<entry name="serial"></entry><entry name="asset">A7</entry><entry name="sku"></entry>'
               '</chassis></sysinfo>')


def test_inputs_with_unsupported_bus_or_type_are_rejected():
    with pytest.raises(DomainError, match="unsupported bus ps2"):
        input_elements(conversion(make_vmi({"devices": {"inputs": [{"name": "k", "bus": "ps2"}]}})))
    with pytest.raises(DomainError, match="unsupported type keyboard"):
        input_elements(conversion(make_vmi({"devices": {"inputs": [{"name": "k", "type": "keyboard"}]}})))


# -- features / clock --------------------------------------------------------------------------------------

def test_features_default_acpi_and_vmport():
    assert_xml(features_element(conversion(make_vmi())), '<features><acpi/><vmport state="off"/></features>')


def test_features_hyperv_dependencies_and_order():
    vmi = make_vmi({"features": {"acpi": {"enabled": False}, "apic": {}, "smm": {}, "kvm": {"hidden": True},
                                 "pvspinlock": {"enabled": False},
                                 "hyperv": {"synictimer": {"direct": {}}, "spinlocks": {},
                                            "vendorid": {"vendorid": "kv"},
                                            "relaxed": {"enabled": False}},
                                 "hypervPassthrough": {"enabled": True}}})
    assert_xml(features_element(conversion(vmi)), '<features><apic/><hyperv>'
               '<relaxed state="off"/><spinlocks state="on" retries="4096"/><vpindex state="on"/>'
               '<synic state="on"/><stimer state="on"><direct state="on"/></stimer>'
               '<vendor_id state="on" value="kv"/></hyperv><smm/><kvm><hidden state="on"/></kvm>'
               '<pvspinlock state="off"/><vmport state="off"/></features>')


def test_evmcs_requires_vapic_and_vmx():
    conv = conversion(make_vmi({"features": {"hyperv": {"evmcs": {}}}}))
    assert conv.features["hyperv"]["vapic"] == {"enabled": True}
    assert {"name": "vmx", "policy": "require"} in conv.cpu["features"]


def test_clock_utc_with_timers():
    vmi = make_vmi({"clock": {"utc": {"offsetSeconds": 30}, "timer": {
        "hpet": {"present": False}, "kvm": {}, "rtc": {"tickPolicy": "catchup", "track": "guest"}, "hyperv": {}}}})
    assert_xml(clock_element(conversion(vmi)), '<clock offset="utc" adjustment="30">'
               '<timer name="rtc" tickpolicy="catchup" present="yes" track="guest"/>'
               '<timer name="kvmclock" present="yes"/><timer name="hpet" present="no"/>'
               '<timer name="hypervclock" present="yes"/></clock>')


def test_clock_timezone_and_absent_clock():
    assert_xml(clock_element(conversion(make_vmi({"clock": {"timezone": "Europe/Paris"}}))),
               '<clock offset="timezone" timezone="Europe/Paris"/>')
    assert clock_element(conversion(make_vmi())) is None


# -- disks -------------------------------------------------------------------------------------------------

def test_letters():
    assert [letters(i) for i in (0, 25, 26, 27, 701, 702)] == ["a", "z", "aa", "ab", "zz", "aaa"]


def test_disks_default_sata_and_shared_sd_numbering_with_scsi_units():
    vmi = make_vmi({"devices": {"disks": [{"name": "root"}, {"name": "data", "disk": {"bus": "scsi"}},
                                          {"name": "ci", "disk": {"bus": "virtio"}}]}},
                   volumes=[{"name": "root", "containerDisk": {"image": "x"}},
                            {"name": "data", "persistentVolumeClaim": {"claimName": "pvc"}},
                            {"name": "ci", "cloudInitNoCloud": {"userData": "x"}}])
    conv = conversion(vmi, LauncherContext(block_pvcs=frozenset({"data"})))
    assert_xml(disk_elements(conv, plan_iothreads(conv)),
               '<disk device="disk" type="file">'
               '<source file="/var/run/kubevirt-ephemeral-disks/disk-data/root/disk.qcow2"/>'
               '<target bus="sata" dev="sda"/>'
               '<driver error_policy="stop" name="qemu" type="qcow2" discard="unmap"/><alias name="ua-root"/>'
               '<backingStore type="file"><format type="qcow2"/>'
               '<source file="/var/run/kubevirt/container-disks/disk_0.img"/></backingStore></disk>'
               '<disk device="disk" type="block"><source dev="/dev/data" name="data"/>'
               '<target bus="scsi" dev="sdb"/><driver error_policy="stop" name="qemu" type="raw" discard="unmap"/>'
               '<alias name="ua-data"/><address type="drive" bus="0" controller="0" unit="1"/></disk>'
               '<disk device="disk" type="file" model="virtio-non-transitional">'
               '<source file="/var/run/kubevirt-ephemeral-disks/cloud-init-data/ns1/vm1/noCloud.iso"/>'
               '<target bus="virtio" dev="vda"/>'
               '<driver error_policy="stop" name="qemu" type="raw" discard="unmap"/><alias name="ua-ci"/></disk>')


def test_cdrom_readonly_tray_boot_order_and_discard_by_volume_type():
    vmi = make_vmi({"devices": {"disks": [{"name": "iso", "cdrom": {}, "bootOrder": 1, "serial": "X"},
                                          {"name": "dv", "cdrom": {"readOnly": False, "tray": "open"}},
                                          {"name": "empty", "cdrom": {"bus": "sata"}}]}},
                   volumes=[{"name": "iso", "configMap": {"name": "cm"}}, {"name": "dv", "dataVolume": {"name": "dv"}}])
    conv = conversion(vmi)
    assert_xml(disk_elements(conv, plan_iothreads(conv)),
               '<disk device="cdrom" type="file"><source file="/var/run/kubevirt-private/config-map-disks/iso.iso"/>'
               '<target bus="sata" dev="sda" tray="closed"/><driver error_policy="stop" name="qemu" type="raw"/>'
               '<readonly/><alias name="ua-iso"/><boot order="1"/></disk>'
               '<disk device="cdrom" type="file"><source file="/var/run/kubevirt-private/vmi-disks/dv/disk.img"/>'
               '<target bus="sata" dev="sdb" tray="open"/>'
               '<driver error_policy="stop" name="qemu" type="raw" discard="unmap"/><alias name="ua-dv"/></disk>'
               '<disk device="cdrom" type="block"><source/><target bus="sata" dev="sdc" tray="closed"/>'
               '<driver error_policy="stop" name="qemu" type="raw" discard="unmap"/><readonly/>'
               '<alias name="ua-empty"/></disk>')


def test_downward_metrics_disk_is_readonly_virtio_without_discard():
    vmi = make_vmi({"devices": {"disks": [{"name": "m", "disk": {"bus": "virtio"}}]}},
                   volumes=[{"name": "m", "downwardMetrics": {}}])
    conv = conversion(vmi)
    assert_xml(disk_elements(conv, plan_iothreads(conv)),
               '<disk device="disk" type="file" model="virtio-non-transitional">'
               '<source file="/var/run/kubevirt-private/downwardapi-disks/vhostmd0"/><target bus="virtio" dev="vda"/>'
               '<driver error_policy="stop" name="qemu" type="raw"/><readonly/><alias name="ua-m"/></disk>')


def test_disk_without_volume_and_bad_error_policy_are_rejected():
    conv = conversion(make_vmi({"devices": {"disks": [{"name": "lost"}]}}, volumes=[]))
    with pytest.raises(DomainError, match="no matching volume with name lost"):
        disk_elements(conv, plan_iothreads(conv))
    conv = conversion(make_vmi({"devices": {"disks": [{"name": "d", "errorPolicy": "explode"}]}},
                               volumes=[{"name": "d", "emptyDisk": {"capacity": "1Gi"}}]))
    with pytest.raises(DomainError, match="error policy explode not recognized"):
        disk_elements(conv, plan_iothreads(conv))


def test_dedicated_and_shared_iothreads_on_virtio_disks():
    vols = [{"name": n, "emptyDisk": {"capacity": "1Gi"}} for n in ("a", "b", "c")]
    vmi = make_vmi({"ioThreadsPolicy": "shared", "devices": {"disks": [
        {"name": "a", "disk": {"bus": "virtio"}, "dedicatedIOThread": True},
        {"name": "b", "disk": {"bus": "virtio"}}, {"name": "c", "disk": {"bus": "sata"}}]}}, volumes=vols)
    conv = conversion(vmi)
    plan = plan_iothreads(conv)
    disks = disk_elements(conv, plan)
    assert [d.find("driver").get("iothread") for d in disks] == ["2", "1", None]
    assert_xml(iothreads_element(plan), "<iothreads>2</iothreads>")


def test_supplemental_pool_lists_every_thread_on_virtio_disks():
    vmi = make_vmi({"ioThreadsPolicy": "supplementalPool", "ioThreads": {"supplementalPoolThreadCount": 2},
                    "devices": {"disks": [{"name": "a", "disk": {"bus": "virtio"}}]}},
                   volumes=[{"name": "a", "emptyDisk": {"capacity": "1Gi"}}])
    conv = conversion(vmi)
    plan = plan_iothreads(conv)
    assert_xml(disk_elements(conv, plan)[0].find("driver"),
               '<driver error_policy="stop" name="qemu" type="qcow2" discard="unmap">'
               '<iothreads><iothread id="1"/><iothread id="2"/></iothreads></driver>')
    assert_xml(iothreads_element(plan), "<iothreads>2</iothreads>")


# -- interfaces / controllers / hostdevs -------------------------------------------------------------------

def test_interfaces_tap_bindings():
    vmi = make_vmi({"devices": {"networkInterfaceMultiqueue": True, "interfaces": [
        {"name": "default", "masquerade": {}},
        {"name": "nic2", "bridge": {}, "model": "e1000e", "macAddress": "02:00:00:00:00:01", "bootOrder": 2,
         "state": "down"},
        {"name": "vf", "sriov": {}}]}, "cpu": {"sockets": 2}},
        networks=POD + [{"name": "nic2", "multus": {"networkName": "br"}},
                        {"name": "vf", "multus": {"networkName": "s"}}])
    assert_xml(interface_elements(conversion(vmi)),
               '<interface type="ethernet"><source/><model type="virtio-non-transitional"/>'
               '<alias name="ua-default"/><driver name="vhost" queues="2"/><rom enabled="no"/></interface>'
               '<interface type="ethernet"><source/><model type="e1000e"/><mac address="02:00:00:00:00:01"/>'
               '<boot order="2"/><link state="down"/><alias name="ua-nic2"/></interface>')


def test_default_pod_interface_is_added_by_the_defaults():
    assert_xml(interface_elements(conversion(make_vmi())),
               '<interface type="ethernet"><source/><model type="virtio-non-transitional"/>'
               '<alias name="ua-default"/><rom enabled="no"/></interface>')


def test_controllers_default_and_usb_for_tablet():
    assert_xml(controller_elements(conversion(make_vmi()), plan_iothreads(conversion(make_vmi()))),
               '<controller type="usb" index="0" model="none"/>'
               '<controller type="scsi" index="0" model="virtio-non-transitional"/>'
               '<controller type="virtio-serial" index="0" model="virtio-non-transitional"/>')
    conv = conversion(make_vmi({"devices": {"inputs": [{"name": "t"}], "disableHotplug": True,
                                            "autoattachSerialConsole": False, "useVirtioTransitional": True}},
                               annotations={"kubevirt.io/disablePCIHole64": "true"}))
    assert_xml(controller_elements(conv, plan_iothreads(conv)),
               '<controller type="usb" index="0" model="qemu-xhci"/>'
               '<controller type="pci" index="0" model="pcie-root"><pcihole64 unit="KiB">0</pcihole64></controller>')


def _scsi_controller(domain: dict, volumes: list[dict]):
    conv = conversion(make_vmi(domain, volumes=volumes))
    return next(c for c in controller_elements(conv, plan_iothreads(conv)) if c.get("type") == "scsi")


def test_scsi_controller_gets_no_driver_without_a_dedicated_scsi_disk():
    """ioThreadsPolicy and a SCSI disk are not enough: upstream wants a SCSI disk with dedicatedIOThread."""
    vols = [{"name": n, "emptyDisk": {"capacity": "1Gi"}} for n in ("a", "b")]
    controller = _scsi_controller({"ioThreadsPolicy": "auto", "cpu": {"sockets": 2}, "devices": {"disks": [
        {"name": "a", "disk": {"bus": "scsi"}}, {"name": "b", "disk": {"bus": "virtio"}, "dedicatedIOThread": True}]},
        "resources": {"requests": {"cpu": "2"}}}, vols)
    assert_xml(controller, '<controller type="scsi" index="0" model="virtio-non-transitional"/>')


def test_scsi_controller_thread_follows_the_virtio_round_robin_and_queues_the_vcpus():
    vols = [{"name": n, "emptyDisk": {"capacity": "1Gi"}} for n in ("a", "b", "c", "s")]
    disks = [{"name": "a", "disk": {"bus": "virtio"}}, {"name": "b", "disk": {"bus": "virtio"}},
             {"name": "c", "disk": {"bus": "sata"}}, {"name": "s", "disk": {"bus": "scsi"}, "dedicatedIOThread": True}]
    controller = _scsi_controller({"ioThreadsPolicy": "auto", "cpu": {"sockets": 3}, "devices": {"disks": disks},
                                   "resources": {"requests": {"cpu": "2"}}}, vols)
    # auto pool of 3 (a, b, c; limit 2 per requested CPU = 4); only the virtio disks advance the round robin
    # (1 -> 2 -> 3), so the controller gets thread 3; queues = the 3 vCPUs; no <iothreads> list
    assert_xml(controller, '<controller type="scsi" index="0" model="virtio-non-transitional">'
                           '<driver iothread="3" queues="3"/></controller>')


def test_scsi_controller_driver_without_a_policy_when_a_scsi_disk_is_dedicated():
    vols = [{"name": n, "emptyDisk": {"capacity": "1Gi"}} for n in ("a", "s")]
    controller = _scsi_controller({"devices": {"disks": [
        {"name": "a", "disk": {"bus": "virtio"}}, {"name": "s", "disk": {"bus": "scsi"}, "dedicatedIOThread": True}]}},
        vols)
    assert_xml(controller, '<controller type="scsi" index="0" model="virtio-non-transitional">'
                           '<driver iothread="1" queues="1"/></controller>')


def test_scsi_controller_gets_no_driver_without_a_shared_thread():
    """Only a dedicated SCSI disk: no auto threads, so upstream gives the controller no driver."""
    controller = _scsi_controller({"devices": {"disks": [
        {"name": "s", "disk": {"bus": "scsi"}, "dedicatedIOThread": True}]}},
        [{"name": "s", "emptyDisk": {"capacity": "1Gi"}}])
    assert_xml(controller, '<controller type="scsi" index="0" model="virtio-non-transitional"/>')


def test_hostdevs_from_device_plugin_env():
    assert (resource_variable("PCI_RESOURCE_", "nvidia.com/TU104GL_Tesla_T4")
            == "PCI_RESOURCE_NVIDIA_COM_TU104GL_TESLA_T4")
    vmi = make_vmi({"devices": {"gpus": [{"name": "g", "deviceName": "nvidia.com/T4"}],
                                "hostDevices": [{"name": "h", "deviceName": "intel.com/qat"}]}})
    ctx = LauncherContext(env={"PCI_RESOURCE_NVIDIA_COM_T4": "0000:81:00.0",
                               "PCI_RESOURCE_INTEL_COM_QAT": "0000:3b:01.2"})
    assert_xml(hostdev_elements(conversion(vmi, ctx)),
               '<hostdev type="pci" managed="no"><source><address type="pci" domain="0x0000" bus="0x3b" slot="0x01" '
               'function="0x2"/></source><alias name="ua-hostdevice-h"/></hostdev>'
               '<hostdev type="pci" managed="no"><source><address type="pci" domain="0x0000" bus="0x81" slot="0x00" '
               'function="0x0"/></source><alias name="ua-gpu-g"/></hostdev>')
    with pytest.raises(DomainError, match="GPU host-devices"):
        hostdev_elements(conversion(vmi, LauncherContext(env={"PCI_RESOURCE_INTEL_COM_QAT": "0000:3b:01.2"})))


# -- other devices -----------------------------------------------------------------------------------------

def test_channel_video_graphics_console():
    conv = conversion(make_vmi())
    assert_xml(channel_elements(conv),
               '<channel type="unix"><target name="org.qemu.guest_agent.0" type="virtio"/></channel>')
    assert_xml(video_elements(conv), '<video><model type="vga" heads="1" vram="16384"/></video>')
    assert_xml(graphics_elements(conv), f'<graphics type="vnc"><listen type="socket" '
               f'socket="/var/run/kubevirt-private/{UID}/virt-vnc"/></graphics>')
    assert_xml(console_elements(conv), f'<serial type="unix"><target port="0"/><source mode="bind" '
               f'path="/var/run/kubevirt-private/{UID}/virt-serial0"/><log '
               f'file="/var/run/kubevirt-private/{UID}/virt-serial0-log" append="on"/></serial>'
               '<console type="pty"><target type="serial" port="0"/></console>')


def test_efi_guests_get_bochs_and_disabled_devices_disappear():
    conv = conversion(make_vmi({"firmware": {"uuid": FW_UUID, "bootloader": {"efi": {}}}}))
    assert_xml(video_elements(conv), '<video><model type="bochs" heads="1"/></video>')
    off = conversion(make_vmi({"devices": {"autoattachGraphicsDevice": False, "autoattachSerialConsole": False,
                                           "logSerialConsole": False}}))
    assert video_elements(off) == [] and graphics_elements(off) == [] and console_elements(off) == []


def test_memballoon_reporting_and_disabled():
    assert_xml(memballoon_element(conversion(make_vmi())),
               '<memballoon model="virtio-non-transitional" freePageReporting="on"><stats period="10"/></memballoon>')
    dedicated = conversion(make_vmi({"cpu": {"dedicatedCpuPlacement": True}}))
    assert memballoon_element(dedicated).get("freePageReporting") == "off"
    assert_xml(memballoon_element(conversion(make_vmi({"devices": {"autoattachMemBalloon": False}}))),
               '<memballoon model="none"/>')


def test_inputs_rng_tpm_watchdog_sound():
    conv = conversion(make_vmi({"devices": {"inputs": [{"name": "t1", "bus": "virtio"}, {"name": "t2"}], "rng": {},
                                            "tpm": {"persistent": True}, "watchdog": {"name": "wd"},
                                            "sound": {"name": "snd", "model": "ac97"}}}))
    assert_xml(input_elements(conv), '<input type="tablet" bus="virtio" model="virtio"><alias name="ua-t1"/></input>'
               '<input type="tablet" bus="usb"><alias name="ua-t2"/></input>')
    assert_xml(rng_elements(conv),
               '<rng model="virtio-non-transitional"><backend model="random">/dev/urandom</backend></rng>')
    assert_xml(tpm_elements(conv),
               '<tpm model="tpm-crb"><backend type="emulator" version="2.0" persistent_state="yes"/></tpm>')
    assert_xml(watchdog_elements(conv), '<watchdog model="i6300esb" action="reset"><alias name="ua-wd"/></watchdog>')
    assert_xml(sound_elements(conv), '<sound model="ac97"><alias name="ua-snd"/></sound>')
    plain = conversion(make_vmi({"devices": {"tpm": {}}}))
    assert_xml(tpm_elements(plain), '<tpm model="tpm-tis"><backend type="emulator" version="2.0"/></tpm>')


# -- dedicated CPUs, NUMA, launch security -----------------------------------------------------------------

def test_dedicated_pinning_with_isolated_emulator_and_iothread():
    vmi = make_vmi({"cpu": {"sockets": 2, "dedicatedCpuPlacement": True, "isolateEmulatorThread": True},
                    "ioThreadsPolicy": "shared"}, volumes=[{"name": "d", "emptyDisk": {"capacity": "1Gi"}}])
    conv = conversion(vmi)
    assert_xml(Pinning(conv, plan_iothreads(conv)).cputune(),
               '<cputune><vcpupin vcpu="0" cpuset="0"/><vcpupin vcpu="1" cpuset="1"/>'
               '<iothreadpin iothread="1" cpuset="2"/><emulatorpin cpuset="2"/></cputune>')
    assert_xml(features_element(conv),
               '<features><acpi/><kvm><hint-dedicated state="on"/></kvm><vmport state="off"/></features>')


def test_dedicated_pinning_needs_enough_pod_cpus():
    conv = conversion(make_vmi({"cpu": {"sockets": 4, "dedicatedCpuPlacement": True}}), LauncherContext(cpuset=(0, 1)))
    with pytest.raises(DomainError, match="not enough CPUs"):
        Pinning(conv, plan_iothreads(conv))


def test_numa_passthrough_cells_tune_and_pages():
    vmi = make_vmi({"cpu": {"sockets": 2, "dedicatedCpuPlacement": True, "numa": {"guestMappingPassthrough": {}},
                            "realtime": {}},
                    "memory": {"guest": "2Gi", "hugepages": {"pageSize": "1Gi"}}})
    conv = conversion(vmi)
    numa = NumaPassthrough(conv, Pinning(conv, plan_iothreads(conv)))
    assert_xml(numa.numa(), '<numa><cell id="0" cpus="0,1" memory="2147483648" unit="b">'
               '<distances><sibling id="0" value="10"/></distances></cell></numa>')
    assert_xml(numa.numatune(), '<numatune><memory mode="strict" nodeset="0"/>'
               '<memnode cellid="0" mode="strict" nodeset="0"/></numatune>')
    backing = memory_backing(conv)
    numa.adjust_backing(backing)
    assert_xml(backing, '<memoryBacking><hugepages><page size="1073741824" unit="b" nodeset="0"/></hugepages>'
               '<source type="memfd"/><allocation mode="immediate"/><nosharepages/></memoryBacking>')


def test_numa_passthrough_requires_hugepages():
    conv = conversion(make_vmi({"cpu": {"dedicatedCpuPlacement": True, "numa": {"guestMappingPassthrough": {}}}}))
    with pytest.raises(DomainError, match="hugepages"):
        NumaPassthrough(conv, Pinning(conv, plan_iothreads(conv)))


def test_launch_security_sev_policy():
    conv = conversion(make_vmi({"launchSecurity": {"sev": {"policy": {"encryptedState": True}}}}))
    assert_xml(launch_security_element(conv), '<launchSecurity type="sev"><policy>0x5</policy></launchSecurity>')
    assert launch_security_element(conversion(make_vmi())) is None


def test_ignition_annotation_adds_fw_cfg_arguments():
    from lxml import etree

    from instancetype_webhook.domxml.qemucmd import qemu_commandline

    root = etree.Element("domain", nsmap={"qemu": "http://libvirt.org/schemas/domain/qemu/1.0"})
    qemu_commandline(conversion(make_vmi(annotations={"kubevirt.io/ignitiondata": '{"ignition": {}}'})), root)
    assert_xml(root, '<domain xmlns:qemu="http://libvirt.org/schemas/domain/qemu/1.0"><qemu:commandline>'
               '<qemu:arg value="-fw_cfg"/><qemu:arg value="name=opt/com.coreos/config,'
               'file=/var/run/kubevirt-ephemeral-disks/ignition-data/ns1/vm1/data.ig"/></qemu:commandline></domain>')
    plain = etree.Element("domain")
    qemu_commandline(conversion(make_vmi()), plain)
    assert len(plain) == 0


def test_vgpu_mdev_gets_display_and_ramfb_on_the_first_device():
    vmi = make_vmi({"devices": {"gpus": [{"name": "a", "deviceName": "nvidia.com/GRID"},
                                         {"name": "b", "deviceName": "nvidia.com/GRID"}]}})
    ctx = LauncherContext(env={"MDEV_PCI_RESOURCE_NVIDIA_COM_GRID": "u-1,u-2"})
    assert_xml(hostdev_elements(conversion(vmi, ctx)),
               '<hostdev type="mdev" mode="subsystem" model="vfio-pci" display="on" ramfb="on">'
               '<source><address type="" bus="" uuid="u-1"/></source><alias name="ua-gpu-a"/></hostdev>'
               '<hostdev type="mdev" mode="subsystem" model="vfio-pci">'
               '<source><address type="" bus="" uuid="u-2"/></source><alias name="ua-gpu-b"/></hostdev>')
