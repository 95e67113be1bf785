"""Applying an instance type's CPU (spec 2.3.1; instancetype_webhook.kubevirt.apply.cpu): every conflict in order,
then the copied fields and the computed topology."""
from __future__ import annotations

from instancetype_webhook.kubevirt.apply import apply_instancetype
from tests.kit.kubevirt import BASE, fields, itype, template


def test_cpu_fields_are_copied_and_topology_computed():
    t = template()
    causes = apply_instancetype(t, itype(4, cpu={"model": "host-passthrough", "dedicatedCPUPlacement": True,
                                                  "isolateEmulatorThread": True,
                                                 "numa": {"guestMappingPassthrough": {}},
                                                  "realtime": {"mask": "0-3"}, "maxSockets": 4}))
    assert causes == []
    assert t["spec"]["domain"]["cpu"] == {"model": "host-passthrough", "dedicatedCpuPlacement": True,
                                          "isolateEmulatorThread": True, "numa": {"guestMappingPassthrough": {}},
                                          "realtime": {"mask": "0-3"}, "maxSockets": 4,
                                          "sockets": 4, "cores": 1, "threads": 1}


def test_all_cpu_conflicts_are_reported_in_order():
    domain = {"cpu": {"sockets": 1, "cores": 1, "threads": 1, "model": "Haswell", "dedicatedCpuPlacement": True,
                      "isolateEmulatorThread": True, "numa": {}, "realtime": {}},
              "resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "1"}}}
    it = itype(cpu={"model": "x", "dedicatedCPUPlacement": False, "isolateEmulatorThread": False,
                    "numa": {"guestMappingPassthrough": {}}, "realtime": {}})
    causes = apply_instancetype(template(domain), it)
    assert fields(causes) == [f"{BASE}.domain.{p}" for p in (
        "resources.requests.cpu", "resources.limits.cpu", "cpu.sockets", "cpu.cores", "cpu.threads", "cpu.model",
        "cpu.dedicatedCPUPlacement", "cpu.isolateEmulatorThread", "cpu.numa", "cpu.realtime")]
    assert causes[0].reason == "FieldValueInvalid"
    assert causes[0].message == (f"VM field(s) {BASE}.domain.resources.requests.cpu "
                                 "conflicts with selected instance type")


def test_e9_optional_cpu_fields_coexist_or_are_overwritten():
    it = itype(cpu={"model": "host-passthrough", "maxSockets": 4})
    assert fields(apply_instancetype(template({"cpu": {"model": "Haswell"}}), it)) == [f"{BASE}.domain.cpu.model"]
    t = template({"cpu": {"maxSockets": 8}})
    assert apply_instancetype(t, it) == [] and t["spec"]["domain"]["cpu"]["maxSockets"] == 4
    t = template({"cpu": {"dedicatedCpuPlacement": True}})
    assert apply_instancetype(t, itype()) == [] and t["spec"]["domain"]["cpu"]["dedicatedCpuPlacement"] is True
    it_false = itype(cpu={"dedicatedCPUPlacement": False})
    assert fields(apply_instancetype(template({"cpu": {"dedicatedCpuPlacement": True}}), it_false)) == [
        f"{BASE}.domain.cpu.dedicatedCPUPlacement"]
    t = template({"cpu": {"dedicatedCpuPlacement": False}})
    assert apply_instancetype(t, it_false) == []
    assert "dedicatedCpuPlacement" not in t["spec"]["domain"]["cpu"]  # Go prints no false


def test_zero_counts_are_no_conflict():
    assert apply_instancetype(template({"cpu": {"sockets": 0}}), itype()) == []
