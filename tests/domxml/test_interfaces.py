"""<interface> (domxml/interfaces.py): the tap bindings and the default pod interface."""
from __future__ import annotations

from instancetype_webhook.domxml.interfaces import interface_elements
from tests.kit.domxml import assert_xml, conversion, make_vmi

POD = [{"name": "default", "pod": {}}]


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
