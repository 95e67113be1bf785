"""Builders for the live-update tests (tests/kubevirt/liveupdate): a VM template spec with interfaces and
networks, and a running VMI around it (its LiveMigratable condition and interface statuses)."""
from __future__ import annotations

from typing import Any

POD_IFACE, POD_NET = {"name": "default", "masquerade": {}}, {"name": "default", "pod": {}}
BLUE_IFACE, BLUE_NET = {"name": "blue", "bridge": {}}, {"name": "blue", "multus": {"networkName": "blue-net"}}


def nic_spec(ifaces: list[dict[str, Any]], nets: list[dict[str, Any]]) -> dict[str, Any]:
    """A template spec (VM) or VMI spec holding only `ifaces` and `nets`."""
    return {"domain": {"devices": {"interfaces": ifaces}}, "networks": nets}


def nic_vmi(ifaces: list[dict[str, Any]], nets: list[dict[str, Any]], migratable: bool = True,
            statuses: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A running VMI with `ifaces` and `nets`, LiveMigratable or not, with the interface statuses given."""
    conditions = [{"type": "LiveMigratable", "status": "True" if migratable else "False"}]
    return {"spec": nic_spec(ifaces, nets), "status": {"conditions": conditions, "interfaces": statuses or []}}
