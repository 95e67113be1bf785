"""The instance type / preference stage of the VM validating webhook (spec 3.6, 3.9, section 6)."""
import copy

from hypothesis import HealthCheck, given, settings

from instancetype_webhook.kubevirt.causes import Verdict
from instancetype_webhook.kubevirt.releases import LAUNCH_SECURITY_DEPRECATION_WARNING
from instancetype_webhook.kubevirt.source import InMemorySource
from instancetype_webhook.kubevirt.vm_webhook import MAX_WARNING_LENGTH, admit_object, validate_vm
from tests.kit.builders import vm as build_vm
from tests.kit.kubevirt import JSON
from tests.kit.releases import sides

NS = "ns"


def cit(name, spec):
    return {"kind": "VirtualMachineClusterInstancetype", "metadata": {"name": name}, "spec": spec}


def cpref(name, spec):
    return {"kind": "VirtualMachineClusterPreference", "metadata": {"name": name}, "spec": spec}


SOURCE = InMemorySource(
    [
        cit("c-2x2", {"cpu": {"guest": 2}, "memory": {"guest": "2Gi"}}),
        cit("c-3x1", {"cpu": {"guest": 3}, "memory": {"guest": "1Gi"}}),
        cit("c-1x1", {"cpu": {"guest": 1}, "memory": {"guest": "1Gi"}}),
        cpref("p-spread", {"cpu": {"preferredCPUTopology": "spread"}}),
        cpref("p-req", {"requirements": {"cpu": {"guest": 2}, "memory": {"guest": "1.5Gi"}}}),
        cpref("p-mem", {"requirements": {"memory": {"guest": "2Gi"}}}),
        cpref("p-arm", {"requirements": {"architecture": "arm64"}}),
    ],
    default_namespace=NS,
)


def vm(instancetype=None, preference=None, domain=None) -> dict:
    return build_vm("vm", NS, instancetype=instancetype or None, preference=preference or None, domain=domain or None)


def test_no_references_allowed():
    verdict = validate_vm(vm(), SOURCE)
    assert verdict.allowed and verdict.warnings == []


def test_e5_spread_not_divisible():
    verdict = validate_vm(vm("c-3x1", "p-spread"), SOURCE)
    assert not verdict.allowed and verdict.code == 422
    assert [c.field for c in verdict.causes] == ["instancetype.spec.cpu.guest"]
    assert verdict.message.startswith("3 vCPUs provided by the instance type are not divisible")


def test_spread_is_checked_before_conflicts():
    verdict = validate_vm(vm("c-3x1", "p-spread", {"cpu": {"sockets": 1}}), SOURCE)
    assert [c.field for c in verdict.causes] == ["instancetype.spec.cpu.guest"]


def test_e6_topology_conflicts_in_order():
    verdict = validate_vm(vm("c-2x2", domain={"cpu": {"sockets": 1, "cores": 1, "threads": 1}}), SOURCE)
    paths = [f"spec.template.spec.domain.cpu.{x}" for x in ("sockets", "cores", "threads")]
    assert [c.field for c in verdict.causes] == paths
    assert all(c.reason == "FieldValueInvalid" for c in verdict.causes)
    assert verdict.message == ", ".join(f"VM field(s) {p} conflicts with selected instance type" for p in paths)


def test_e15_requirements_against_instancetype():
    verdict = validate_vm(vm("c-1x1", "p-req"), SOURCE)
    assert [c.to_dict() for c in verdict.causes] == [
        {
            "reason": "FieldValueNotFound",
            "field": "spec.instancetype",
            "message": "failure checking preference requirements: "
            "insufficient CPU resources of 1 vCPU provided by instance type, "
            "preference requires 2 vCPU",
        }
    ]
    assert validate_vm(vm("c-2x2", "p-req"), SOURCE).allowed


def test_e16_requirements_without_instancetype_after_defaults():
    verdict = validate_vm(vm(None, "p-req", {"cpu": {"sockets": 2}, "memory": {"guest": "1Gi"}}), SOURCE)
    assert [c.field for c in verdict.causes] == ["spec.template.spec.domain.memory"]
    assert verdict.message.endswith("insufficient Memory resources of 1Gi provided by VirtualMachine, "
                                    "preference requires 1536Mi")


def test_defaults_give_one_socket_and_memory_from_requests():
    ok = vm(None, "p-mem", {"resources": {"requests": {"memory": "2Gi"}}})
    assert validate_vm(ok, SOURCE).allowed
    verdict = validate_vm(vm(None, "p-req"), SOURCE)
    assert verdict.message.endswith("insufficient CPU resources of 1 vCPU provided by VirtualMachine, "
                                    "preference requires 2 vCPU provided as sockets")


def test_architecture_is_defaulted_before_the_check():
    verdict = validate_vm(vm("c-1x1", "p-arm"), SOURCE)
    assert verdict.message == ("failure checking preference requirements: "
                               "preference requires architecture arm64 but amd64 is being requested")


def test_e17_missing_instancetype_is_allowed_with_a_warning():
    verdict = validate_vm(vm("nonexistent"), SOURCE)
    assert verdict.allowed
    assert verdict.warnings == [
        'instance type not checked: virtualmachineclusterinstancetypes.instancetype.kubevirt.io "nonexistent" not found'
    ]


def test_missing_instancetype_still_checks_the_preference_alone():
    verdict = validate_vm(vm("nonexistent", "p-mem"), SOURCE)
    assert not verdict.allowed
    assert verdict.message == (
        "failure checking preference requirements: "
        "insufficient Memory resources of 0 provided by VirtualMachine, preference requires 2Gi"
    )
    assert verdict.causes[0].field == "spec.template.spec.domain.memory"


def test_unknown_kind_is_ignored_like_upstream():
    machine = vm()
    machine["spec"]["preference"] = {"name": "p-req", "kind": "VirtualMachineThing"}
    verdict = validate_vm(machine, SOURCE)
    assert verdict.allowed
    assert verdict.warnings == ["preference not checked: got unexpected kind in PreferenceMatcher: VirtualMachineThing"]


def test_long_names_keep_the_warning_short_and_named():
    name = "x" * 200
    verdict = validate_vm(vm(name), SOURCE)
    assert verdict.allowed and len(verdict.warnings) == 1
    assert len(verdict.warnings[0]) <= MAX_WARNING_LENGTH
    assert "xxxx" in verdict.warnings[0] and "notFound" in verdict.warnings[0]


def test_the_vm_is_never_modified():
    machine = vm("c-2x2", "p-req")
    before = copy.deepcopy(machine)
    validate_vm(machine, SOURCE)
    assert machine == before


def test_deleting_vm_is_allowed():
    machine = vm("c-3x1", "p-spread")
    machine["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    assert validate_vm(machine, SOURCE).allowed


def test_malformed_vm_is_a_400():
    verdict = validate_vm({"spec": {"instancetype": "c-2x2"}}, SOURCE)
    assert not verdict.allowed and verdict.code == 400 and "spec.instancetype" in verdict.message
    assert validate_vm([], SOURCE).code == 400
    for template in ({"spec": []}, {"metadata": "x", "spec": {}}, {"spec": {"domain": 3}}):
        machine = vm("c-2x2")
        machine["spec"]["template"] = template
        verdict = validate_vm(machine, SOURCE)
        assert verdict.code == 400 and "spec.template." in verdict.message


def test_bad_quantity_in_requirements_is_a_clear_400():
    source = InMemorySource([*SOURCE.objects(), cpref("p-bad", {"requirements": {"memory": {"guest": "lots"}}})],
                            default_namespace=NS)
    verdict = validate_vm(vm("c-2x2", "p-bad"), source)
    assert not verdict.allowed and verdict.code == 400 and "lots" in verdict.message


def test_malformed_nested_field_is_a_400_not_a_crash():
    machine = vm("c-2x2", "p-req", {"cpu": "lots", "devices": {}})
    verdict = validate_vm(machine, SOURCE)
    assert not verdict.allowed and verdict.code in (400, 422)
    assert verdict.message


def test_conflicts_come_before_the_defaults_and_defaults_errors_are_400():
    from instancetype_webhook.kubevirt.configuration import ClusterSettings

    no_bridge = ClusterSettings(permit_bridge_on_pod_network=False)
    conflicted = validate_vm(vm("c-2x2", domain={"cpu": {"sockets": 1}, "devices": {}}), SOURCE, no_bridge)
    assert conflicted.code == 422 and [c.field for c in conflicted.causes] == ["spec.template.spec.domain.cpu.sockets"]
    refused = validate_vm(vm("c-2x2"), SOURCE, no_bridge)
    assert (refused.allowed, refused.code, refused.message) == (False, 400,
                                                                "bridge interface is not enabled in kubevirt-config")


# -- never a crash: arbitrary JSON where the VM and the referenced specs have structure --------------------

@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(domain=JSON, it_spec=JSON, pref_spec=JSON)
def test_validate_vm_answers_for_any_json(domain, it_spec, pref_spec):
    source = InMemorySource([cit("fuzz-it", it_spec), cpref("fuzz-pref", pref_spec)], default_namespace=NS)
    machine = vm("fuzz-it", "fuzz-pref")
    machine["spec"]["template"]["spec"]["domain"] = domain
    verdict = validate_vm(machine, source)
    assert isinstance(verdict, Verdict)
    assert verdict.allowed or (verdict.code in (400, 422) and verdict.message)


def test_the_launch_security_deprecation_warning_exists_from_v1_9():
    """C2: admitting an instance type with `launchSecurity` warns from v1.9; v1.8 admits it silently."""
    before, after = sides(LAUNCH_SECURITY_DEPRECATION_WARNING)
    itype = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineClusterInstancetype",
             "metadata": {"name": "sev"},
             "spec": {"cpu": {"guest": 1}, "memory": {"guest": "1Gi"}, "launchSecurity": {"sev": {}}}}
    old, new = admit_object(itype, release=before), admit_object(itype, release=after)
    assert old.allowed and old.warnings == []
    assert new.allowed and new.warnings == ["launchSecurity is deprecated and will be removed in a future release. "
                                            "Use preference instead."]
    assert admit_object(itype).warnings == new.warnings  # main, the default
