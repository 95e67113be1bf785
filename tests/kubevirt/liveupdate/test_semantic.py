"""Go's semantic equality on JSON shapes."""
from __future__ import annotations

from instancetype_webhook.kubevirt.liveupdate.semantic import semantic_equal


def test_quantities_empty_maps_and_non_pointer_zero_values() -> None:
    assert semantic_equal({"guest": "1Gi"}, {"guest": "1024Mi"})
    assert semantic_equal({"devices": {}, "resources": {"requests": {}}}, {})
    assert semantic_equal({"cpu": {"sockets": 2, "dedicatedCpuPlacement": False}}, {"cpu": {"sockets": 2}})
    assert not semantic_equal({"cpu": {}}, {})  # a pointer struct that is set differs from an absent one
    assert not semantic_equal({"devices": {"autoattachPodInterface": False}}, {"devices": {}})
    assert not semantic_equal({"guest": "1Gi"}, {"guest": "2Gi"})
