"""<controller> (domxml/controllers.py): usb, scsi (its driver's I/O thread and queues), virtio-serial, pci."""
from __future__ import annotations

from instancetype_webhook.domxml.controllers import controller_elements
from instancetype_webhook.domxml.iothreads import plan_iothreads
from tests.kit.domxml import assert_xml, conversion, make_vmi


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
