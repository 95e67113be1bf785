"""The network synchronizer's VMI patch against a running VMI: NIC hotplug and unplug."""
from __future__ import annotations

from instancetype_webhook.kubevirt.liveupdate.netsync import network_patch
from tests.kit.liveupdate import BLUE_IFACE, BLUE_NET, POD_IFACE, POD_NET, nic_spec, nic_vmi


def test_a_new_bridge_nic_is_added_a_masquerade_one_is_not() -> None:
    running = nic_vmi([POD_IFACE], [POD_NET])
    patch = network_patch(nic_spec([POD_IFACE, BLUE_IFACE], [POD_NET, BLUE_NET]), running)
    assert patch == {"spec.networks": [POD_NET, BLUE_NET], "spec.domain.devices.interfaces": [POD_IFACE, BLUE_IFACE]}
    masq = {"name": "red", "masquerade": {}}
    assert network_patch(nic_spec([POD_IFACE, masq], [POD_NET, {"name": "red", "multus": {"networkName": "r"}}]),
                         running) == {}


def test_absent_unplugs_only_when_the_naming_scheme_is_known() -> None:
    absent = {**BLUE_IFACE, "state": "absent"}
    unknown = nic_vmi([POD_IFACE, BLUE_IFACE], [POD_NET, BLUE_NET])  # no interface status: assumed ordinal
    assert network_patch(nic_spec([POD_IFACE, absent], [POD_NET, BLUE_NET]), unknown) == {}
    hashed = nic_vmi([POD_IFACE, BLUE_IFACE], [POD_NET, BLUE_NET],
                     statuses=[{"name": "blue", "podInterfaceName": "pod1a2b"}])
    patch = network_patch(nic_spec([POD_IFACE, absent], [POD_NET, BLUE_NET]), hashed)
    assert patch == {"spec.networks": [POD_NET, BLUE_NET], "spec.domain.devices.interfaces": [POD_IFACE, absent]}
