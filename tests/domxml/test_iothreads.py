"""I/O threads (domxml/iothreads.py): the plan's threads on virtio disks and the <iothreads> count."""
from __future__ import annotations

from instancetype_webhook.domxml.disks import disk_elements
from instancetype_webhook.domxml.iothreads import iothreads_element, plan_iothreads
from tests.kit.domxml import assert_xml, conversion, make_vmi


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
