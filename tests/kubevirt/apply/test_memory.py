"""Applying an instance type's memory (spec 2.5; instancetype_webhook.kubevirt.apply.memory): the first conflict
only, then guest memory, the overcommit request, hugepages and maxGuest."""
from __future__ import annotations

import pytest

from instancetype_webhook.kubevirt.apply import apply_instancetype
from tests.kit.kubevirt import BASE, fields, itype, template


def test_e7_only_the_first_memory_conflict_is_reported():
    domain = {"cpu": {"sockets": 1}, "memory": {"guest": "1Gi"}, "resources": {"requests": {"memory": "1Gi"}}}
    assert fields(apply_instancetype(template(domain), itype())) == [
        f"{BASE}.domain.cpu.sockets", f"{BASE}.domain.memory.guest"]


@pytest.mark.parametrize("domain, it_memory, path", [
    ({"memory": {"hugepages": {"pageSize": "2Mi"}}}, {"hugepages": {"pageSize": "1Gi"}}, "memory.hugepages"),
    ({"memory": {"maxGuest": "8Gi"}}, {"maxGuest": "4Gi"}, "memory.maxGuest"),
    ({"resources": {"requests": {"memory": "1Gi"}}}, {}, "resources.requests.memory"),
    ({"resources": {"limits": {"memory": "1Gi"}}}, {}, "resources.limits.memory"),
    ({"memory": {"hugepages": {}, "maxGuest": "8Gi"}, "resources": {"limits": {"memory": "1"}}},
     {"hugepages": {}, "maxGuest": "4Gi"}, "memory.hugepages"),
])
def test_memory_conflicts(domain, it_memory, path):
    assert fields(apply_instancetype(template(domain), itype(mem="2Gi", memory=it_memory))) == [
        f"{BASE}.domain.{path}"]


def test_e10_overcommit_sets_the_request_in_float32():
    t = template()
    apply_instancetype(t, itype(1, "1Gi", memory={"overcommitPercent": 10}))
    assert t["spec"]["domain"]["memory"] == {"guest": "1Gi"}
    assert t["spec"]["domain"]["resources"] == {"requests": {"memory": "966367616"}}
    t = template({"resources": {"requests": {"ephemeral-storage": "1Gi"}}})
    apply_instancetype(t, itype(1, "4Gi", memory={"overcommitPercent": 50}))
    assert t["spec"]["domain"]["resources"]["requests"] == {"ephemeral-storage": "1Gi", "memory": "2Gi"}


def test_vm_hugepages_and_max_guest_survive_when_the_instancetype_is_silent():
    t = template({"memory": {"hugepages": {"pageSize": "2Mi"}}})
    assert apply_instancetype(t, itype(memory={"maxGuest": "8Gi"})) == []
    assert t["spec"]["domain"]["memory"] == {"hugepages": {"pageSize": "2Mi"}, "guest": "2Gi", "maxGuest": "8Gi"}
