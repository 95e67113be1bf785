"""The network synchronizer's VMI patch and the network restart rule, against a running VMI."""
from __future__ import annotations

from instancetype_webhook.kubevirt.liveupdate.netsync import network_patch
from instancetype_webhook.kubevirt.liveupdate.network import network_restart_required

POD_IFACE, POD_NET = {"name": "default", "masquerade": {}}, {"name": "default", "pod": {}}
BLUE_IFACE, BLUE_NET = {"name": "blue", "bridge": {}}, {"name": "blue", "multus": {"networkName": "blue-net"}}


def spec(ifaces: list, nets: list) -> dict:
    return {"domain": {"devices": {"interfaces": ifaces}}, "networks": nets}


def vmi(ifaces: list, nets: list, migratable: bool = True, statuses: list | None = None) -> dict:
    conditions = [{"type": "LiveMigratable", "status": "True" if migratable else "False"}]
    return {"spec": spec(ifaces, nets), "status": {"conditions": conditions, "interfaces": statuses or []}}


def test_a_new_bridge_nic_is_added_a_masquerade_one_is_not() -> None:
    running = vmi([POD_IFACE], [POD_NET])
    patch = network_patch(spec([POD_IFACE, BLUE_IFACE], [POD_NET, BLUE_NET]), running)
    assert patch == {"spec.networks": [POD_NET, BLUE_NET], "spec.domain.devices.interfaces": [POD_IFACE, BLUE_IFACE]}
    masq = {"name": "red", "masquerade": {}}
    assert network_patch(spec([POD_IFACE, masq], [POD_NET, {"name": "red", "multus": {"networkName": "r"}}]),
                         running) == {}


def test_absent_unplugs_only_when_the_naming_scheme_is_known() -> None:
    absent = {**BLUE_IFACE, "state": "absent"}
    unknown = vmi([POD_IFACE, BLUE_IFACE], [POD_NET, BLUE_NET])  # no interface status: assumed ordinal
    assert network_patch(spec([POD_IFACE, absent], [POD_NET, BLUE_NET]), unknown) == {}
    hashed = vmi([POD_IFACE, BLUE_IFACE], [POD_NET, BLUE_NET],
                 statuses=[{"name": "blue", "podInterfaceName": "pod1a2b"}])
    patch = network_patch(spec([POD_IFACE, absent], [POD_NET, BLUE_NET]), hashed)
    assert patch == {"spec.networks": [POD_NET, BLUE_NET], "spec.domain.devices.interfaces": [POD_IFACE, absent]}


def test_restart_rule() -> None:
    running = vmi([POD_IFACE, BLUE_IFACE], [POD_NET, BLUE_NET])
    assert not network_restart_required(spec([POD_IFACE, BLUE_IFACE], [POD_NET, BLUE_NET]), running)
    assert network_restart_required(spec([POD_IFACE], [POD_NET]), running)  # removed without `absent`
    assert not network_restart_required(spec([POD_IFACE, {**BLUE_IFACE, "state": "down"}], [POD_NET, BLUE_NET]),
                                        running)  # only the state differs
    renamed = [POD_NET, {"name": "blue", "multus": {"networkName": "other"}}]
    assert not network_restart_required(spec([POD_IFACE, BLUE_IFACE], renamed), running)  # migratable: NAD name
    assert network_restart_required(spec([POD_IFACE, BLUE_IFACE], renamed),
                                    vmi([POD_IFACE, BLUE_IFACE], [POD_NET, BLUE_NET], migratable=False))
    assert network_restart_required(spec([BLUE_IFACE, POD_IFACE], [BLUE_NET, POD_NET]), vmi([BLUE_IFACE], [BLUE_NET]))
