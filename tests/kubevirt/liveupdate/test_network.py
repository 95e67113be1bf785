"""netvmliveupdate.IsRestartRequired: which interface and network changes against the running VMI need a
restart, and the VMI's LiveMigratable condition that relaxes the multus rule."""
from __future__ import annotations

from instancetype_webhook.kubevirt.liveupdate.network import is_migratable, network_restart_required
from tests.kit.liveupdate import BLUE_IFACE, BLUE_NET, POD_IFACE, POD_NET, nic_spec, nic_vmi


def test_restart_rule() -> None:
    running = nic_vmi([POD_IFACE, BLUE_IFACE], [POD_NET, BLUE_NET])
    assert not network_restart_required(nic_spec([POD_IFACE, BLUE_IFACE], [POD_NET, BLUE_NET]), running)
    assert network_restart_required(nic_spec([POD_IFACE], [POD_NET]), running)  # removed without `absent`
    assert not network_restart_required(nic_spec([POD_IFACE, {**BLUE_IFACE, "state": "down"}], [POD_NET, BLUE_NET]),
                                        running)  # only the state differs
    renamed = [POD_NET, {"name": "blue", "multus": {"networkName": "other"}}]
    assert not network_restart_required(nic_spec([POD_IFACE, BLUE_IFACE], renamed), running)  # migratable: NAD name
    assert network_restart_required(nic_spec([POD_IFACE, BLUE_IFACE], renamed),
                                    nic_vmi([POD_IFACE, BLUE_IFACE], [POD_NET, BLUE_NET], migratable=False))
    assert network_restart_required(nic_spec([BLUE_IFACE, POD_IFACE], [BLUE_NET, POD_NET]),
                                    nic_vmi([BLUE_IFACE], [BLUE_NET]))


def test_is_migratable_reads_the_live_migratable_condition() -> None:
    assert is_migratable(nic_vmi([], []))
    assert not is_migratable(nic_vmi([], [], migratable=False))
    assert not is_migratable({"status": {"conditions": [{"type": "Ready", "status": "True"}]}})
    assert not is_migratable({})


def test_an_added_interface_or_network_needs_no_restart_a_changed_one_does() -> None:
    running = nic_vmi([POD_IFACE], [POD_NET])
    assert not network_restart_required(nic_spec([POD_IFACE, BLUE_IFACE], [POD_NET, BLUE_NET]), running)
    assert network_restart_required(nic_spec([{"name": "default", "bridge": {}}], [POD_NET]), running)
    assert network_restart_required(nic_spec([POD_IFACE], [{"name": "default", "multus": {"networkName": "x"}}]),
                                    running)


def test_a_pod_network_added_to_a_vmi_without_one_needs_a_restart() -> None:
    running = nic_vmi([BLUE_IFACE], [BLUE_NET])
    assert network_restart_required(nic_spec([BLUE_IFACE, POD_IFACE], [BLUE_NET, POD_NET]), running)
    assert not network_restart_required(nic_spec([BLUE_IFACE], [BLUE_NET]), running)
