"""<disk> (domxml/disks.py): target names, sources per volume type, drivers, cdroms, addresses, errors."""
from __future__ import annotations

import pytest

from instancetype_webhook.domxml import DomainError, LauncherContext
from instancetype_webhook.domxml.disks import disk_elements, letters
from instancetype_webhook.domxml.iothreads import plan_iothreads
from tests.kit.domxml import assert_xml, conversion, make_vmi


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
