"""Applying an instance type (spec 2.3-2.5, 3.2): each concern, its conflicts and their order."""
from __future__ import annotations

import pytest

from instancetype_webhook.kubevirt.apply import apply_instancetype
from instancetype_webhook.kubevirt.apply.conflicts import conflict_message
from instancetype_webhook.kubevirt.apply.vmi import apply_to_template
from instancetype_webhook.kubevirt.preference.topology import guest_topology, preferred_topology, spread_options

BASE = "spec.template.spec"


def itype(guest=2, mem="2Gi", **extra):
    spec = {"cpu": {"guest": guest}, "memory": {"guest": mem}}
    for key, value in extra.items():
        if key in ("cpu", "memory"):
            spec[key].update(value)
        else:
            spec[key] = value
    return spec


def template(domain=None, **spec):
    return {"metadata": {}, "spec": {"domain": domain or {}, **spec}}


def fields(causes):
    return [c.field for c in causes]


# -- topology (spec 2.4) ---------------------------------------------------------------------------
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


# -- CPU (spec 2.3.1) ------------------------------------------------------------------------------
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


# -- memory (spec 2.5) -----------------------------------------------------------------------------
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


# -- the other steps and their order (spec 3.2) ----------------------------------------------------
def test_every_step_conflicts_in_upstream_order():
    t = {"metadata": {"annotations": {"b": "0", "a": "0"}},
         "spec": {"nodeSelector": {}, "schedulerName": "mine",
                  "domain": {"cpu": {"cores": 2}, "memory": {"guest": "1Gi"},
                             "ioThreads": {"supplementalPoolThreadCount": 1},
                             "ioThreadsPolicy": "shared", "launchSecurity": {},
                             "devices": {"gpus": [{"name": "g"}], "hostDevices": [{"name": "h"}]}}}}
    it = itype(nodeSelector={"x": "y"}, schedulerName="s", ioThreads={"supplementalPoolThreadCount": 2},
               ioThreadsPolicy="auto", launchSecurity={"sev": {}}, gpus=[{"name": "g2", "deviceName": "d"}],
               hostDevices=[{"name": "h2", "deviceName": "d"}], annotations={"a": "1", "b": "1", "c": "1"})
    assert fields(apply_instancetype(t, it)) == [
        f"{BASE}.nodeSelector", f"{BASE}.schedulerName", f"{BASE}.domain.cpu.cores", f"{BASE}.domain.memory.guest",
        f"{BASE}.domain.ioThreads.supplementalPoolThreadCount", f"{BASE}.domain.ioThreadsPolicy",
        f"{BASE}.domain.launchSecurity", f"{BASE}.domain.devices.gpus", f"{BASE}.domain.devices.hostDevices",
        "annotations.a", "annotations.b"]


def test_the_other_steps_write_when_free():
    t = template({"devices": {"disks": []}})
    it = itype(nodeSelector={"x": "y"}, schedulerName="s", ioThreads={"supplementalPoolThreadCount": 2},
               ioThreadsPolicy="supplementalPool", launchSecurity={"sev": {"session": ""}},
               gpus=[{"name": "g", "deviceName": "nvidia.com/A", "tag": ""}],
               hostDevices=[{"name": "h", "deviceName": "d"}],
               annotations={"a": "1"})
    assert apply_instancetype(t, it) == []
    spec = t["spec"]
    assert spec["nodeSelector"] == {"x": "y"} and spec["schedulerName"] == "s"
    assert spec["domain"]["ioThreads"] == {"supplementalPoolThreadCount": 2}
    assert spec["domain"]["ioThreadsPolicy"] == "supplementalPool"
    assert spec["domain"]["launchSecurity"] == {"sev": {}}  # Go does not print the empty session
    assert spec["domain"]["devices"] == {"disks": [], "gpus": [{"name": "g", "deviceName": "nvidia.com/A"}],
                                         "hostDevices": [{"name": "h", "deviceName": "d"}]}
    assert t["metadata"]["annotations"] == {"a": "1"}
    assert spec["nodeSelector"] is not it["nodeSelector"]


def test_e11_annotations_same_value_is_fine_and_preference_loses():
    t = {"metadata": {"annotations": {"vm.kubevirt.io/os": "windows", "same": "1"}}, "spec": {"domain": {}}}
    pref = {"annotations": {"vm.kubevirt.io/os": "linux", "a.example.com/x": "2"}}
    assert apply_to_template(t, itype(annotations={"a.example.com/x": "1", "same": "1"}), pref) == []
    assert t["metadata"]["annotations"] == {"vm.kubevirt.io/os": "windows", "same": "1", "a.example.com/x": "1"}
    t = {"metadata": {"annotations": {"a.example.com/x": "0"}}, "spec": {}}
    causes = apply_to_template(t, itype(annotations={"a.example.com/x": "1"}), pref)
    assert fields(causes) == ["annotations.a.example.com/x"]
    assert causes[0].message == "VM field(s) annotations.a.example.com/x conflicts with selected instance type"


def test_conflicts_stop_the_preference():
    t = template({"cpu": {"sockets": 1}})
    causes = apply_to_template(t, itype(), {"preferredSubdomain": "x"})
    assert causes and "subdomain" not in t["spec"]


def test_vmi_base_and_message_join():
    causes = apply_instancetype(template({"cpu": {"sockets": 1}}), itype(), base="spec")
    assert fields(causes) == ["spec.domain.cpu.sockets"]
    assert conflict_message(["a", "b"]) == "VM field(s) a, b conflicts with selected instance type"
