"""ApplyToVMI (spec 3.2; instancetype_webhook.kubevirt.apply.vmi): every step of the instance type in upstream
order, their conflicts in that order, and the preference only without conflicts."""
from __future__ import annotations

from instancetype_webhook.kubevirt.apply import apply_instancetype
from instancetype_webhook.kubevirt.apply.conflicts import conflict_message
from instancetype_webhook.kubevirt.apply.vmi import apply_to_template
from instancetype_webhook.kubevirt.releases import MAIN_PROFILE
from tests.kit.kubevirt import BASE, fields, itype, template


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
    assert apply_to_template(t, itype(annotations={"a.example.com/x": "1", "same": "1"}), pref, MAIN_PROFILE) == []
    assert t["metadata"]["annotations"] == {"vm.kubevirt.io/os": "windows", "same": "1", "a.example.com/x": "1"}
    t = {"metadata": {"annotations": {"a.example.com/x": "0"}}, "spec": {}}
    causes = apply_to_template(t, itype(annotations={"a.example.com/x": "1"}), pref, MAIN_PROFILE)
    assert fields(causes) == ["annotations.a.example.com/x"]
    assert causes[0].message == "VM field(s) annotations.a.example.com/x conflicts with selected instance type"


def test_conflicts_stop_the_preference():
    t = template({"cpu": {"sockets": 1}})
    causes = apply_to_template(t, itype(), {"preferredSubdomain": "x"}, MAIN_PROFILE)
    assert causes and "subdomain" not in t["spec"]


def test_vmi_base_and_message_join():
    causes = apply_instancetype(template({"cpu": {"sockets": 1}}), itype(), base="spec")
    assert fields(causes) == ["spec.domain.cpu.sockets"]
    assert conflict_message(["a", "b"]) == "VM field(s) a, b conflicts with selected instance type"
