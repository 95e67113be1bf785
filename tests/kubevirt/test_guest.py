"""What flattening changes in the guest (instancetype_webhook/kubevirt/guest.py), checked against the domain XML of both
ways of storing the VM: over the public corpus, with --preserve-guest the flat VM's domain equals the
referencing VM's; without it every difference comes with a warning, and no warning comes without one."""
from __future__ import annotations

import copy

from instancetype_webhook.domxml import domain_config
from instancetype_webhook.kubevirt.causes import ExpandError
from instancetype_webhook.kubevirt.configuration import ClusterSettings
from instancetype_webhook.kubevirt.expand import expand
from instancetype_webhook.kubevirt.find import find_preference_spec
from instancetype_webhook.kubevirt.guest import guest_changes, may_change, preserve_guest, review_guest, started_devices
from instancetype_webhook.sources.catalog import load_catalog
from tests.kit.builders import vm as build_vm
from tests.kit.conformance_io import source_for
from tests.kit.corpus_checks import guest_applies, has_domain
from tests.kit.shared_data import conformance_cases

UID = "7f6e5d4c-0000-4000-8000-000000000001"
WINDOWS = {"devices": {"preferredAutoattachInputDevice": True, "preferredInputBus": "virtio",
                       "preferredInputType": "tablet",
                       "preferredInterfaceModel": "e1000e"}}


def vm(devices=None, **spec):
    return build_vm("g", "ns", run_strategy=None, preference="p", domain={"devices": devices or {}}, template=spec)


def flat_of(template_devices, networks=None):
    spec = {"domain": {"devices": template_devices}}
    if networks is not None:
        spec["networks"] = networks
    return {"spec": {"template": {"spec": spec}}}


def test_the_auto_attached_input_loses_the_preferred_bus():
    flat = flat_of({"autoattachInputDevice": True,
                    "interfaces": [{"name": "default", "bridge": {}, "model": "e1000e"}]},
                   [{"name": "default", "pod": {}}])
    assert guest_changes(vm(), flat, WINDOWS) == ["flattening changes input default-0: bus virtio -> usb"]
    kept = preserve_guest(vm(), flat, WINDOWS)
    assert kept["spec"]["template"]["spec"]["domain"]["devices"]["inputs"] == [
        {"name": "default-0", "type": "tablet", "bus": "virtio"}]
    assert guest_changes(vm(), kept, WINDOWS) == []
    assert "inputs" not in flat["spec"]["template"]["spec"]["domain"]["devices"]


def test_inputs_the_vm_brings_are_the_same_either_way():
    own = {"inputs": [{"name": "mine", "type": "tablet"}], "autoattachInputDevice": True}
    flat = flat_of({**own, "inputs": [{"name": "mine", "type": "tablet", "bus": "virtio"}]}, [])
    assert not may_change(flat) and guest_changes(vm(own), flat, WINDOWS) == []


def test_a_preference_without_input_preferences_changes_nothing():
    pref = {"devices": {"preferredAutoattachInputDevice": True}}
    flat = flat_of({"autoattachInputDevice": True, "interfaces": [{"name": "default", "bridge": {}}]},
                   [{"name": "default", "pod": {}}])
    assert guest_changes(vm(), flat, pref) == []
    assert preserve_guest(vm(), flat, pref) is flat


def test_a_turned_off_pod_interface_is_added_by_flattening():
    """Expansion adds the default interface before the preference's preferredAutoattachPodInterface: false
    lands in the template; virt-controller applies the flag first and adds none."""
    pref = {"devices": {"preferredAutoattachPodInterface": False}}
    flat = flat_of({"autoattachPodInterface": False, "interfaces": [{"name": "default", "masquerade": {}}]},
                   [{"name": "default", "pod": {}}])
    settings = ClusterSettings(default_network_binding="masquerade")
    assert started_devices(vm()["spec"]["template"]["spec"], pref, settings).interfaces == ()
    assert guest_changes(vm(), flat, pref, settings) == ["flattening adds interface default (masquerade binding)"]
    kept = preserve_guest(vm(), flat, pref, settings)
    assert "interfaces" not in kept["spec"]["template"]["spec"]["domain"]["devices"]
    assert "networks" not in kept["spec"]["template"]["spec"] and guest_changes(vm(), kept, pref, settings) == []


def test_review_guest_over_the_bundled_windows_preference():
    source = load_catalog(default_namespace="demo")
    win = {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "metadata": {"name": "win", "namespace": "demo"},
           "spec": {"instancetype": {"name": "u1.medium"}, "preference": {"name": "windows.11.virtio"},
                    "template": {"spec": {"domain": {"devices": {}}}}}}
    flat = expand(win, source)
    same, warnings = review_guest(win, flat, source)
    assert same is flat and warnings == ["flattening changes input default-0: bus virtio -> usb"]
    kept, none = review_guest(win, flat, source, preserve=True)
    assert none == [] and kept["spec"]["template"]["spec"]["domain"]["devices"]["inputs"][0]["bus"] == "virtio"
    fedora = copy.deepcopy(win)
    fedora["spec"]["preference"]["name"] = "fedora"
    flat_fedora = expand(fedora, source)
    assert review_guest(fedora, flat_fedora, source) == (flat_fedora, [])


def test_the_corpus_has_cases_where_flattening_changes_the_guest():
    """The Windows and desktop common preferences (preferredInputBus virtio) are in the public corpus."""
    changed = []
    for case in filter(guest_applies, conformance_cases()):
        if not has_domain(case):
            continue
        case_input = case["input"]
        source, settings = source_for(case_input), domain_config(case_input.get("kubevirtConfiguration")).settings
        try:
            flat = expand(case_input["vm"], source, settings)
        except ExpandError:
            continue
        preference = find_preference_spec(case_input["vm"], source, settings.release)
        if guest_changes(case_input["vm"], flat, preference, settings):
            changed.append(case["name"])
    assert "common-preference.windows.11.virtio.preference-only" in changed and len(changed) >= 5
