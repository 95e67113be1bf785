"""What an older release's API server prunes from an object (instancetype_webhook.kubevirt.prune)."""
from __future__ import annotations

import copy

from instancetype_webhook.kubevirt.prune import kind_of, prune_object, prune_to_release
from instancetype_webhook.kubevirt.releases import PROFILES

V17, V18, MAIN = PROFILES["v1.7"], PROFILES["v1.8"], PROFILES["main"]


def preference(spec):
    return {"kind": "VirtualMachineClusterPreference", "metadata": {"name": "p"}, "spec": spec}


def vm(template_spec):
    return {"kind": "VirtualMachine", "metadata": {"name": "v"}, "spec": {"template": {"spec": template_spec}}}


def test_kind_of_maps_the_kinds_the_releases_differ_in():
    assert kind_of({"kind": "VirtualMachineInstancetype"}) == "instancetype"
    assert kind_of({"kind": "VirtualMachineClusterInstancetype"}) == "instancetype"
    assert kind_of({"kind": "VirtualMachinePreference"}) == "preference"
    assert kind_of({"kind": "VirtualMachine"}) == "vm"
    assert kind_of({"kind": "ConfigMap"}) is None and kind_of({}) is None and kind_of(["VirtualMachine"]) is None


def test_an_older_release_drops_the_fields_it_lacks_from_a_copy():
    pref = preference({"preferredLaunchSecurity": {"sev": {}}, "devices": {"preferredVideoType": "virtio",
                                                                            "preferredDiskBus": "virtio"}})
    before = copy.deepcopy(pref)
    pruned = prune_to_release(pref, "preference", V18)
    assert pruned["spec"] == {"devices": {"preferredDiskBus": "virtio"}}
    assert pref == before  # the input is never changed


def test_a_release_that_lacks_nothing_returns_the_object_itself():
    pref = preference({"preferredLaunchSecurity": {"sev": {}}})
    assert prune_to_release(pref, "preference", MAIN) is pref
    assert prune_to_release(pref, "instancetype", V17) is pref  # no instance type field was ever added


def test_list_paths_walk_every_item():
    machine = vm({"domain": {"devices": {"interfaces": [{"name": "a", "passtBinding": {}}, {"name": "b"}, "junk"]}},
                  "volumes": [{"name": "v", "containerPath": "/x"}]})
    out = prune_to_release(machine, "vm", V17)
    assert out["spec"]["template"]["spec"]["domain"]["devices"]["interfaces"] == [{"name": "a"}, {"name": "b"}, "junk"]
    assert out["spec"]["template"]["spec"]["volumes"] == [{"name": "v"}]
    kept = prune_to_release(machine, "vm", V18)  # v1.8 has both fields
    assert kept["spec"]["template"]["spec"]["volumes"] == [{"name": "v", "containerPath": "/x"}]


def test_prune_object_also_prunes_a_controller_revisions_data():
    revision = {"kind": "ControllerRevision", "metadata": {"name": "r"},
                "data": preference({"preferredLaunchSecurity": {}, "preferredSubdomain": "s"})}
    out = prune_object(revision, V18)
    assert out["data"]["spec"] == {"preferredSubdomain": "s"} and out["metadata"] is revision["metadata"]
    assert "preferredLaunchSecurity" in revision["data"]["spec"]
    other = {"kind": "ConfigMap", "data": {"preferredLaunchSecurity": {}}}
    assert prune_object(other, V17) is other
    assert prune_object(preference({"preferredLaunchSecurity": {}}), V18)["spec"] == {}


def test_a_pruned_source_serves_the_objects_as_the_release_would():
    from instancetype_webhook.kubevirt.prune import PrunedSource
    from instancetype_webhook.kubevirt.source import InMemorySource

    pref = preference({"preferredLaunchSecurity": {"sev": {}}, "devices": {"preferredDiskBus": "virtio"}})
    revision = {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": {"name": "r", "namespace": "ns"},
                "data": {**pref, "apiVersion": "instancetype.kubevirt.io/v1beta1"}}
    source = InMemorySource([pref, revision], default_namespace="ns")
    before = copy.deepcopy(pref)
    as_v18 = PrunedSource(source, V18)
    got = as_v18.get("VirtualMachineClusterPreference", "p")
    assert got["spec"] == {"devices": {"preferredDiskBus": "virtio"}}
    assert as_v18.get_revision("r", "ns")["data"]["spec"] == {"devices": {"preferredDiskBus": "virtio"}}
    assert as_v18.get("VirtualMachineClusterPreference", "p") is got  # pruned once per object
    assert source.get("VirtualMachineClusterPreference", "p") == before  # the source's object is not changed
    assert as_v18.get("VirtualMachineClusterPreference", "missing") is None and as_v18.get_revision("x", "ns") is None
    assert as_v18.default_namespace == "ns"  # the rest is the source's own
    assert PrunedSource(source, MAIN).get("VirtualMachineClusterPreference", "p") is source.get(
        "VirtualMachineClusterPreference", "p")  # a release that lacks nothing serves the object itself
    source.add(preference({"preferredLaunchSecurity": {"sev": {}}}))  # the object replaced: pruned afresh
    assert as_v18.get("VirtualMachineClusterPreference", "p")["spec"] == {}


def test_a_vmi_is_pruned_of_the_vm_template_fields_its_release_lacks():
    """A VirtualMachineInstance's spec is the VM's spec.template.spec: v1.7's API server drops v1.8's fields
    from it (tlbflush's direct, an interface's passtBinding), v1.8's keeps them."""
    vmi = {"kind": "VirtualMachineInstance", "metadata": {"name": "i"}, "spec": {
        "domain": {"features": {"hyperv": {"tlbflush": {"enabled": True, "direct": {"enabled": True}}}},
                   "devices": {"interfaces": [{"name": "default", "passtBinding": {}}]}},
        "networks": [{"name": "default", "pod": {}}]}}
    before = copy.deepcopy(vmi)
    old = prune_object(vmi, V17)
    assert old["spec"]["domain"]["features"]["hyperv"]["tlbflush"] == {"enabled": True}
    assert old["spec"]["domain"]["devices"]["interfaces"] == [{"name": "default"}]
    assert old["spec"]["networks"] == [{"name": "default", "pod": {}}] and vmi == before
    assert prune_object(vmi, V18) == vmi and prune_object(vmi, MAIN) is vmi  # v1.8 has both; main lacks nothing
