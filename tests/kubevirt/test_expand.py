"""Expansion end to end (instancetype_webhook.kubevirt.expand): the worked examples of spec section 6, the public
helper API, and properties over the corpus VMs (idempotence, what expansion does not own, mis-typed data)."""
from __future__ import annotations

import copy
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from instancetype_webhook.kubevirt.causes import ExpandError
from instancetype_webhook.kubevirt.expand import (
    apply_specs,
    default_template_spec,
    expand,
    expand_vm_spec,
    find_specs,
    finish_expansion,
    has_references,
)
from instancetype_webhook.kubevirt.preference.apply import apply_preference
from instancetype_webhook.kubevirt.releases import CREATION_TIMESTAMP_OMITTED, MAIN_PROFILE, PANIC_DEVICE_CREATION
from instancetype_webhook.kubevirt.source import InMemorySource
from tests.kit.builders import vm as build_vm
from tests.kit.conformance_io import source_for
from tests.kit.releases import settings_as, sides
from tests.kit.shared_data import conformance_cases


def cluster_it(name, guest, memory, **memory_extra):
    return {"kind": "VirtualMachineClusterInstancetype", "metadata": {"name": name},
            "spec": {"cpu": {"guest": guest}, "memory": {"guest": memory, **memory_extra}}}


def cluster_pref(name, spec):
    return {"kind": "VirtualMachineClusterPreference", "metadata": {"name": name}, "spec": spec}


SOURCE = InMemorySource([
    cluster_it("c-2x2", 2, "2Gi"), cluster_it("c-4x4", 4, "4Gi"), cluster_it("c-3x1", 3, "1Gi"),
    cluster_it("c-12", 12, "12Gi"), cluster_it("o-1x1g", 1, "1Gi", overcommitPercent=10),
    cluster_it("u1.medium", 1, "4Gi"),
    cluster_pref("p-cores", {"cpu": {"preferredCPUTopology": "cores"}}),
    cluster_pref("p-spread", {"cpu": {"preferredCPUTopology": "spread"}}),
    cluster_pref("p-sct3", {"cpu": {"preferredCPUTopology": "spread",
                                    "spreadOptions": {"across": "SocketsCoresThreads", "ratio": 3}}}),
    cluster_pref("fedora", {
        "annotations": {"vm.kubevirt.io/os": "linux"},
        "devices": {"preferredDiskBus": "virtio", "preferredInterfaceModel": "virtio", "preferredRng": {}},
        "features": {"preferredSmm": {}}, "firmware": {"preferredEfi": {"secureBoot": True}},
        "preferredArchitecture": "amd64",
        "requirements": {"architecture": "amd64", "cpu": {"guest": 1}, "memory": {"guest": "2Gi"}}}),
], default_namespace="ns")


def vm(instancetype=None, preference=None, domain=None, **template_spec):
    return build_vm("v", "ns", instancetype=instancetype or None, preference=preference or None, run_strategy="Always",
                    domain=domain, template=template_spec)


def domain_of(result):
    return result["spec"]["template"]["spec"]["domain"]


def test_e1_default_topology_and_no_resources_beyond_the_empty_object():
    out = expand(vm("c-4x4"), SOURCE)
    assert domain_of(out)["cpu"] == {"sockets": 4, "cores": 1, "threads": 1}
    assert domain_of(out)["memory"] == {"guest": "4Gi"}
    assert domain_of(out)["resources"] == {}


@pytest.mark.parametrize("it, pref, topology", [
    ("c-4x4", "p-cores", (1, 4, 1)),
    ("c-2x2", "p-spread", (1, 2, 1)),
    ("c-4x4", "p-spread", (2, 2, 1)),
    ("c-12", "p-sct3", (2, 3, 2)),
    ("c-3x1", "p-spread", (1, 2, 1)),  # E5 is refused at admission; expansion divides silently
])
def test_e2_to_e4_topologies(it, pref, topology):
    cpu = domain_of(expand(vm(it, pref), SOURCE))["cpu"]
    assert (cpu["sockets"], cpu["cores"], cpu["threads"]) == topology


def test_e6_topology_conflict():
    with pytest.raises(ExpandError) as err:
        expand(vm("c-2x2", domain={"cpu": {"sockets": 1, "cores": 1, "threads": 1}}), SOURCE)
    paths = [f"spec.template.spec.domain.cpu.{x}" for x in ("sockets", "cores", "threads")]
    assert err.value.kind == "conflict"
    assert [c.field for c in err.value.causes] == paths
    assert err.value.message == f"VM field(s) {', '.join(paths)} conflicts with selected instance type"


def test_e7_e8_resource_conflicts():
    with pytest.raises(ExpandError) as err:
        expand(vm("c-2x2", domain={"cpu": {"sockets": 1}, "memory": {"guest": "1Gi"},
                                   "resources": {"requests": {"memory": "1Gi"}}}), SOURCE)
    assert [c.field for c in err.value.causes] == ["spec.template.spec.domain.cpu.sockets",
                                                   "spec.template.spec.domain.memory.guest"]
    with pytest.raises(ExpandError) as err:
        expand(vm("c-2x2", domain={"resources": {"limits": {"cpu": "1"}}}), SOURCE)
    assert [c.field for c in err.value.causes] == ["spec.template.spec.domain.resources.limits.cpu"]


def test_e10_overcommit_request():
    out = expand(vm("o-1x1g"), SOURCE)
    assert domain_of(out)["resources"] == {"requests": {"memory": "966367616"}}


def test_e17_missing_instancetype():
    with pytest.raises(ExpandError) as err:
        expand(vm("nonexistent"), SOURCE)
    assert err.value.kind == "notFound"
    assert err.value.message == 'virtualmachineclusterinstancetypes.instancetype.kubevirt.io "nonexistent" not found'


def test_e20_full_expansion():
    source_vm = vm("u1.medium", "fedora", volumes=[
        {"name": "containerdisk", "containerDisk": {"image": "quay.io/containerdisks/fedora:latest"}}])
    before = copy.deepcopy(source_vm)
    out = expand(source_vm, SOURCE)
    assert source_vm == before
    assert out == {
        "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "metadata": {"name": "v", "namespace": "ns"},
        "spec": {"runStrategy": "Always", "template": {
            "metadata": {"annotations": {"vm.kubevirt.io/os": "linux"}},
            "spec": {
                "architecture": "amd64", "evictionStrategy": "None",
                "domain": {
                    "machine": {"type": "q35"},
                    "firmware": {"bootloader": {"efi": {"secureBoot": True}}},
                    "cpu": {"sockets": 1, "cores": 1, "threads": 1},
                    "memory": {"guest": "4Gi"},
                    "resources": {},
                    "features": {"acpi": {}, "smm": {}},
                    "devices": {"rng": {}, "disks": [{"name": "containerdisk", "disk": {"bus": "virtio"}}],
                                "interfaces": [{"name": "default", "bridge": {}, "model": "virtio"}]}},
                "networks": [{"name": "default", "pod": {}}],
                "volumes": [{"name": "containerdisk", "containerDisk": {
                    "image": "quay.io/containerdisks/fedora:latest", "imagePullPolicy": "Always"}}]}}},
        "status": {},
    }


def test_vm_without_references_gets_no_defaults_only_go_printing():
    plain = vm(domain={"cpu": {"sockets": 3}, "devices": {}},
               volumes=[{"name": "d", "containerDisk": {"image": "quay.io/x"}}])
    before = copy.deepcopy(plain)
    out = expand(plain, SOURCE)
    assert plain == before
    expected = copy.deepcopy(plain)
    expected["status"] = {}
    expected["spec"]["template"] = {"metadata": {}, **expected["spec"]["template"]}
    expected["spec"]["template"]["spec"]["domain"]["resources"] = {}
    assert out == expected  # no disks, interfaces, machine type, architecture or pull policy added


def test_status_refs_are_dropped_other_status_kept():
    source_vm = vm("c-2x2")
    source_vm["status"] = {"printableStatus": "Stopped", "instancetypeRef": {"name": "c-2x2"}}
    assert expand(source_vm, SOURCE)["status"] == {"printableStatus": "Stopped"}


def test_fields_outside_the_template_are_shared_not_copied_and_not_changed():
    source_vm = vm("c-2x2")
    source_vm["spec"]["dataVolumeTemplates"] = [{"metadata": {"name": "dv"}}]
    out = expand(source_vm, SOURCE)
    assert out["spec"]["dataVolumeTemplates"] == [{"metadata": {"name": "dv"}}]
    assert out["metadata"] == source_vm["metadata"]


@pytest.mark.parametrize("bad, kind", [
    ("not a vm", "schema"),
    ({"spec": {"instancetype": "c-2x2"}}, "schema"),
    ({"spec": {"instancetype": {"name": "c-2x2"}, "template": {"spec": []}}}, "schema"),
    ({"spec": {"instancetype": {"name": "c-2x2"}, "template": {"spec": {"domain": {"cpu": "x"}}}}}, "badRequest"),
])
def test_mis_shaped_vms_give_an_error_not_a_crash(bad, kind):
    with pytest.raises(ExpandError) as err:
        expand(bad, SOURCE)
    assert err.value.kind == kind


def test_the_steps_the_validator_builds_on():
    source_vm = vm("c-2x2", "p-cores", domain={"cpu": {"sockets": 1}})
    instancetype, preference = find_specs(source_vm, SOURCE, MAIN_PROFILE)
    assert instancetype["cpu"]["guest"] == 2 and preference["cpu"]["preferredCPUTopology"] == "cores"
    new_vm, causes = apply_specs(source_vm, instancetype, preference)
    assert [c.field for c in causes] == ["spec.template.spec.domain.cpu.sockets"]
    assert source_vm["spec"]["template"]["spec"]["domain"] == {"cpu": {"sockets": 1}}
    good = vm("c-2x2", "p-cores")
    new_vm, causes = apply_specs(good, *find_specs(good, SOURCE, MAIN_PROFILE))
    assert causes == [] and "architecture" not in new_vm["spec"]["template"]["spec"]
    default_template_spec(new_vm)
    finish_expansion(new_vm)
    assert new_vm == expand(good, SOURCE)


def test_go_zero_values_of_plain_fields_are_not_printed():
    source_vm = vm("c-2x2", domain={"cpu": {"dedicatedCpuPlacement": False, "model": ""},
                                    "devices": {"disableHotplug": False}})
    domain = domain_of(expand(source_vm, SOURCE))
    assert domain["cpu"] == {"sockets": 2, "cores": 1, "threads": 1}
    assert "disableHotplug" not in domain["devices"]
    only_pref = vm(preference="p-cores", domain={"resources": {"requests": {"cpu": "0"}}})
    assert domain_of(expand(only_pref, SOURCE))["cpu"] == {"cores": 1, "threads": 1}  # sockets 0 is not printed


@pytest.mark.parametrize("spec", [{"instancetype": {"name": "c-2x2"}}, {"template": None}, {}])
def test_a_vm_without_template_is_not_a_valid_virtualmachine(spec):
    with pytest.raises(ExpandError) as err:
        expand({"kind": "VirtualMachine", "metadata": {"name": "v"}, "spec": spec}, SOURCE)
    assert (err.value.kind, err.value.message) == ("schema", "Object is not a valid VirtualMachine")
    assert [c.field for c in err.value.causes] == [""]


def test_preferred_cpu_features_without_instance_type_or_vm_cpu_are_applied():
    """A deliberate divergence: upstream's expansion dereferences the VM's nil `domain.cpu` here (virt-api
    cannot answer); we give the VM the preferred features, as upstream's code means to."""
    source = InMemorySource([cluster_pref("p-features", {"cpu": {"preferredCPUFeatures": [
        {"name": "vmx", "policy": "require"}, {"name": "pcid"}]}})])
    vm = {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "metadata": {"name": "f", "namespace": "default"},
          "spec": {"preference": {"name": "p-features"}, "template": {"spec": {"domain": {"devices": {}}}}}}
    cpu = expand(vm, source)["spec"]["template"]["spec"]["domain"]["cpu"]
    assert cpu["features"] == [{"name": "vmx", "policy": "require"}, {"name": "pcid"}]
    assert "cpu" not in vm["spec"]["template"]["spec"]["domain"]


# -- properties over the corpus VMs ------------------------------------------------------------
# Expansion is idempotent and keeps what it does not own (hypothesis; formerly test_expand_properties.py).
#
# Each example takes a corpus case that expands cleanly and sprinkles unknown fields and labels over the
# VM. Then:
# - the flat result expands to itself, and is a fixpoint of the defaults and of the preference
#   (re-applying either changes nothing);
# - every scalar the submitted VM holds is still there with the same value, except the three fields
#   upstream overwrites on purpose (instance type `maxSockets`, preference `acpi` and `disableHotplug`);
# - the input is never mutated.

# cases that expand cleanly as submitted (no mutating webhook stage before, the default configuration) and
# reference something (a VM without references is answered as it is, without defaults: nothing to re-apply)
GOOD = [c for c in conformance_cases() if "vm" in c["expected"] and not {"expectedInfer", "expectedMutate"} & set(c)
        and not c["input"].get("kubevirtConfiguration") and has_references(c["input"]["vm"])]
OVERWRITTEN = re.compile(r"^spec\.template\.spec\.domain\."
                         r"(cpu\.maxSockets|features\.acpi\..*|devices\.disableHotplug)$")

keys = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=3, max_size=8).map(lambda s: "x" + s)
scalars = st.one_of(st.booleans(), st.integers(-5, 5), st.text(max_size=6))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(keys, inner, max_size=3)), max_leaves=6)
SPOTS = (("metadata",), ("spec",), ("spec", "template", "spec"), ("spec", "template", "spec", "domain"),
         ("spec", "template", "spec", "domain", "devices"))


@st.composite
def corpus_vms(draw):
    case = draw(st.sampled_from(GOOD))
    vm = copy.deepcopy(case["input"]["vm"])
    for spot in draw(st.lists(st.sampled_from(SPOTS), max_size=4)):
        node = vm
        for key in spot:
            node = node.setdefault(key, {})
        node[draw(keys)] = draw(values)
    labels = draw(st.dictionaries(keys, st.text(max_size=5), max_size=3))
    if labels:
        vm.setdefault("metadata", {}).setdefault("labels", {}).update(labels)
    return case, vm


def leaves(value, path=()):
    if isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from leaves(item, (*path, i))
    else:
        yield path, value


def lookup(doc, path):
    for part in path:
        doc = doc[part]
    return doc


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corpus_vms())
def test_expansion_is_idempotent_and_keeps_what_it_does_not_own(drawn):
    case, vm = drawn
    source = source_for(case["input"])
    before = copy.deepcopy(vm)
    flat = expand(vm, source)
    assert vm == before

    assert expand(flat, source) == flat
    again = copy.deepcopy(flat)
    default_template_spec(again)
    finish_expansion(again)
    assert again == flat
    _, preference = find_specs(vm, source, MAIN_PROFILE)
    template = copy.deepcopy(flat["spec"]["template"])
    apply_preference(preference, template)
    assert template == flat["spec"]["template"]

    for path, value in leaves(vm):
        dotted = ".".join(map(str, path))
        # the matchers and their status refs are what expansion removes
        if dotted.startswith(("spec.instancetype", "spec.preference", "status.instancetypeRef",
                              "status.preferenceRef")) or OVERWRITTEN.match(dotted):
            continue
        assert lookup(flat, path) == value, dotted


JUNK = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=4), st.lists(st.integers(), max_size=2),
                 st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))
JUNK_SPOTS = (("status",), ("spec", "template", "metadata"), ("spec", "template", "spec", "volumes"),
              ("spec", "template", "spec", "networks"), ("spec", "template", "spec", "domain", "cpu"),
              ("spec", "template", "spec", "domain", "memory"),
              ("spec", "template", "spec", "domain", "devices", "disks"),
              ("spec", "template", "spec", "domain", "devices", "interfaces"),
              ("spec", "template", "spec", "domain", "resources"),
              ("spec", "template", "spec", "domain", "features"), ("spec", "instancetype", "kind"),
              ("spec", "preference", "name"), ("metadata", "namespace"))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(GOOD), st.sampled_from(JUNK_SPOTS), JUNK)
def test_mis_typed_data_gives_an_expand_error_never_a_crash(case, spot, junk):
    from instancetype_webhook.kubevirt.causes import ExpandError

    vm = copy.deepcopy(case["input"]["vm"])
    node = vm
    for key in spot[:-1]:
        node = node.setdefault(key, {})
        if not isinstance(node, dict):
            return
    node[spot[-1]] = junk
    try:
        result = expand(vm, source_for(case["input"]))
    except ExpandError as err:
        assert err.kind in ("conflict", "notFound", "badRequest", "schema") and err.message
    else:
        assert isinstance(result, dict)


# -- releases ------------------------------------------------------------------------------------------------

PANIC_PREF = {"kind": "VirtualMachineClusterPreference", "metadata": {"name": "panicky"},
              "spec": {"devices": {"preferredPanicDeviceModel": "hyperv"}}}


def _panic_vm(panic_devices=None):
    domain = {"devices": {} if panic_devices is None else {"panicDevices": panic_devices}}
    return build_vm("v", "ns", typed=False, domain=domain, spec={"preference": {"name": "panicky"}})


def _panic_devices(version, vm, gates=()):
    flat = expand(vm, InMemorySource([PANIC_PREF]), settings_as(version, feature_gates=gates))
    return flat["spec"]["template"]["spec"]["domain"]["devices"].get("panicDevices")


@pytest.mark.parametrize("gates", [(), ("PanicDevices",)])
def test_preferred_panic_device_model_creates_a_panic_device_from_v1_9_only(gates):
    """C3: v1.8 only fills in the model of listed panic devices, with the PanicDevices gate listed or not (a
    created device would make v1.8's virt-api refuse the flat VM unless the gate is listed)."""
    before, after = sides(PANIC_DEVICE_CREATION)
    assert _panic_devices(before.name, _panic_vm(), gates) is None
    assert _panic_devices(after.name, _panic_vm(), gates) == [{"model": "hyperv"}]
    for release in (before, after):  # a listed device without a model gets it on both sides
        assert _panic_devices(release.name, _panic_vm([{}]), gates) == [{"model": "hyperv"}]
        assert _panic_devices(release.name, _panic_vm([{"model": "isa"}]), gates) == [{"model": "isa"}]


def test_expand_vm_spec_prints_a_null_creation_timestamp_before_v1_8():
    before, after = sides(CREATION_TIMESTAMP_OMITTED)
    vm = build_vm("v", "ns", typed=False, spec={"preference": {"name": "panicky"}})
    old = expand_vm_spec(vm, InMemorySource([PANIC_PREF]), settings_as(before.name))
    new = expand_vm_spec(vm, InMemorySource([PANIC_PREF]), settings_as(after.name))
    assert old["metadata"]["creationTimestamp"] is None
    assert old["spec"]["template"]["metadata"]["creationTimestamp"] is None
    assert "creationTimestamp" not in new["metadata"]
    assert "creationTimestamp" not in new["spec"]["template"].get("metadata", {})
