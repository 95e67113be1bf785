"""Go-encoder shape of copied values, the JSON copy helpers and the cluster settings."""
from __future__ import annotations

from instancetype_webhook.kubevirt.configuration import DEFAULT_SETTINGS, ClusterSettings
from instancetype_webhook.kubevirt.goshape import APIC, CPU_FEATURE, DEVICE, TIMER, go_clone, go_printed
from instancetype_webhook.kubevirt.jsondata import clone, clone_tree


def test_go_clone_drops_nil_and_plain_zero_values_only():
    assert go_clone({"enabled": None, "endOfInterrupt": False}, APIC) == {}
    assert go_clone({"enabled": False, "endOfInterrupt": True}, APIC) == {"enabled": False, "endOfInterrupt": True}
    timer = {"hpet": {"present": False, "tickPolicy": ""}, "rtc": {"track": "", "tickPolicy": "catchup"}, "hyperv": {}}
    assert go_clone(timer, TIMER) == {"hpet": {"present": False}, "rtc": {"tickPolicy": "catchup"}, "hyperv": {}}
    assert go_clone([{"name": "pcid", "policy": ""}], CPU_FEATURE) == [{"name": "pcid"}]
    assert go_clone([{"name": "", "deviceName": "", "tag": ""}], DEVICE) == [{"name": "", "deviceName": ""}]


def test_copies_are_deep():
    value = {"a": [{"b": 1}], "c": {}}
    for copy_fn in (clone, clone_tree, go_clone):
        copied = copy_fn(value)
        assert copied == value and copied["a"][0] is not value["a"][0]


def test_settings_machine_types():
    assert DEFAULT_SETTINGS.machine_type_for("") == "q35"
    assert DEFAULT_SETTINGS.machine_type_for("arm64") == "virt"
    assert DEFAULT_SETTINGS.machine_type_for("riscv64") == "q35"  # GetMachineType's default branch: amd64's
    assert ClusterSettings(machine_type="pc-q35-rhel9.6.0").machine_type_for("amd64") == "pc-q35-rhel9.6.0"


def test_go_printed_drops_nulls_empty_lists_and_empty_maps_but_keeps_empty_structs():
    vm = {"metadata": {"name": "a", "labels": {}, "annotations": {}, "finalizers": []},
          "spec": {"dataVolumeTemplates": [{
                       "metadata": {"name": "dv", "labels": {}},
                       "spec": {"source": {"blank": {}}, "storage": {"resources": {"requests": {}}}}}],
                   "template": {"metadata": {}, "spec": {
                       "domain": {"devices": {"disks": [], "interfaces": [], "gpus": []}, "resources": {"limits": {}},
                                  "cpu": None},
                       "networks": [], "nodeSelector": {},
                       "volumes": [{"name": "r", "containerDisk": {"image": "i"}}]}}},
          "status": {}}
    assert go_printed(vm) == {
        "metadata": {"name": "a"},
        "spec": {"dataVolumeTemplates": [{"metadata": {"name": "dv"},
                                          "spec": {"source": {"blank": {}}, "storage": {"resources": {}}}}],
                 "template": {"metadata": {}, "spec": {"domain": {"devices": {}, "resources": {}},
                                                       "volumes": [{"name": "r", "containerDisk": {"image": "i"}}]}}},
        "status": {}}
    assert vm["metadata"]["labels"] == {}  # the input is untouched


def test_go_printed_keeps_the_lists_go_prints_even_when_empty():
    """No omitempty on NodeSelector.nodeSelectorTerms nor on the guest agent propagation's users."""
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}}}
    propagation = {"qemuGuestAgent": {"users": []}}
    assert go_printed(affinity) == affinity and go_printed(propagation) == propagation
