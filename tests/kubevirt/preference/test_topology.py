"""The CPU topology from `cpu.guest` and the preference (spec 2.4; kubevirt.preference.topology)."""
from __future__ import annotations

import pytest

from instancetype_webhook.kubevirt.preference.topology import guest_topology, preferred_topology, spread_options


@pytest.mark.parametrize("n, pref, expected", [
    (1, {"cpu": {"preferredCPUTopology": "spread"}}, (1, 1, 1)),
    (4, None, (4, 1, 1)),
    (4, {"cpu": {"preferredCPUTopology": "sockets"}}, (4, 1, 1)),
    (4, {"cpu": {"preferredCPUTopology": "any"}}, (4, 1, 1)),
    (4, {"cpu": {"preferredCPUTopology": "cores"}}, (1, 4, 1)),
    (4, {"cpu": {"preferredCPUTopology": "preferCores"}}, (1, 4, 1)),
    (4, {"cpu": {"preferredCPUTopology": "threads"}}, (1, 1, 4)),
    (2, {"cpu": {"preferredCPUTopology": "spread"}}, (1, 2, 1)),
    (6, {"cpu": {"preferredCPUTopology": "spread"}}, (3, 2, 1)),
    (8, {"cpu": {"preferredCPUTopology": "spread", "spreadOptions": {"ratio": 4}}}, (2, 4, 1)),
    (8, {"preferSpreadSocketToCoreRatio": 4, "cpu": {"preferredCPUTopology": "spread"}}, (2, 4, 1)),
    (8, {"preferSpreadSocketToCoreRatio": 4, "cpu": {"preferredCPUTopology": "spread", "spreadOptions": {"ratio": 2}}},
     (4, 2, 1)),
    (4, {"cpu": {"preferredCPUTopology": "spread", "spreadOptions": {"across": "SocketsCoresThreads"}}}, (1, 2, 2)),
    (12, {"cpu": {"preferredCPUTopology": "spread", "spreadOptions": {"across": "SocketsCoresThreads", "ratio": 3}}},
     (2, 3, 2)),
    (36, {"cpu": {"preferredCPUTopology": "spread", "spreadOptions": {"across": "SocketsCoresThreads", "ratio": 4}}},
     (4, 4, 2)),
    (6, {"cpu": {"preferredCPUTopology": "preferSpread", "spreadOptions": {"across": "CoresThreads"}}}, (1, 3, 2)),
    (3, {"cpu": {"preferredCPUTopology": "spread"}}, (1, 2, 1)),  # integer division loses a vCPU, as upstream
    (4, {"cpu": {"preferredCPUTopology": "spread", "spreadOptions": {"ratio": 0}}}, (0, 0, 1)),  # no crash
])
def test_guest_topology_table(n, pref, expected):
    assert guest_topology(n, pref) == expected


def test_topology_helpers():
    assert preferred_topology(None) == "sockets" and preferred_topology({"cpu": {}}) == "sockets"
    assert preferred_topology({"cpu": {"preferredCPUTopology": "preferAny"}}) == "any"
    assert spread_options({"cpu": {"spreadOptions": {"ratio": 0}}}) == (0, "SocketsCores")
