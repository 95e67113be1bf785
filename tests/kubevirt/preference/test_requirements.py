"""Preference requirements (spec 3.4, E15, E16)."""
import pytest

from instancetype_webhook.kubevirt.preference.requirements import check_requirements

P_REQ = {"requirements": {"cpu": {"guest": 2}, "memory": {"guest": "1.5Gi"}}}
PREFIX = "failure checking preference requirements: "


def it(cpus: int, memory: str) -> dict:
    return {"cpu": {"guest": cpus}, "memory": {"guest": memory}}


def vmi(cpu=None, memory=None, arch="amd64") -> dict:
    domain = {}
    if cpu is not None:
        domain["cpu"] = cpu
    if memory is not None:
        domain["memory"] = memory
    return {"domain": domain, "architecture": arch}


def test_e15_instancetype_cpu_shortfall_reported_first():
    cause = check_requirements(it(1, "1Gi"), P_REQ, vmi({"sockets": 1}, {"guest": "1Gi"}))
    assert cause.to_dict() == {
        "reason": "FieldValueNotFound",
        "field": "spec.instancetype",
        "message": PREFIX + "insufficient CPU resources of 1 vCPU provided by instance type, "
                            "preference requires 2 vCPU",
    }


def test_e15_enough_instancetype_passes():
    assert check_requirements(it(2, "2Gi"), P_REQ, vmi({"sockets": 2}, {"guest": "2Gi"})) is None


def test_instancetype_memory_shortfall_prints_canonical_quantities():
    cause = check_requirements(it(2, "1Gi"), P_REQ, vmi())
    assert cause.field == "spec.instancetype"
    assert cause.message == PREFIX + ("insufficient Memory resources of 1Gi provided by instance type, "
                                      "preference requires 1536Mi")


def test_instancetype_memory_in_decimal_units():
    cause = check_requirements(it(2, "64M"), {"requirements": {"memory": {"guest": "512Mi"}}}, vmi())
    assert cause.message.endswith("of 64M provided by instance type, preference requires 512Mi")


def test_e16_vm_memory_shortfall():
    cause = check_requirements(None, P_REQ, vmi({"sockets": 2}, {"guest": "1Gi"}))
    assert cause.field == "spec.template.spec.domain.memory"
    assert cause.message == PREFIX + ("insufficient Memory resources of 1Gi provided by VirtualMachine, "
                                      "preference requires 1536Mi")


def test_e16_cores_preference_sees_a_partial_topology_as_zero():
    pref = {**P_REQ, "cpu": {"preferredCPUTopology": "cores"}}
    cause = check_requirements(None, pref, vmi({"sockets": 2}, {"guest": "1Gi"}))
    assert cause.field == "spec.template.spec.domain.cpu.cores"
    assert cause.message == (
        PREFIX + "insufficient CPU resources of 0 vCPU provided by VirtualMachine, "
                 "preference requires 2 vCPU provided as cores"
    )


def test_missing_guest_memory_counts_as_zero():
    cause = check_requirements(None, {"requirements": {"memory": {"guest": "2Gi"}}}, vmi({"sockets": 1}, {}))
    assert cause.message == PREFIX + ("insufficient Memory resources of 0 provided by VirtualMachine, "
                                      "preference requires 2Gi")


@pytest.mark.parametrize(
    "topology,fields,how",
    [
        ("any", "cores, sockets, threads", "cores, sockets and threads"),
        ("preferAny", "cores, sockets, threads", "cores, sockets and threads"),
        ("threads", "threads", "threads"),
        ("preferSockets", "sockets", "sockets"),
    ],
)
def test_vm_cpu_topologies(topology, fields, how):
    pref = {"cpu": {"preferredCPUTopology": topology}, "requirements": {"cpu": {"guest": 8}}}
    cause = check_requirements(None, pref, vmi({"sockets": 1, "cores": 2, "threads": 2}))
    expected_fields = ", ".join(f"spec.template.spec.domain.cpu.{f}" for f in fields.split(", "))
    assert cause.field == expected_fields
    assert cause.message.endswith(f"preference requires 8 vCPU provided as {how}")


@pytest.mark.parametrize(
    "across,have,fields",
    [
        (None, 2, "sockets, cores"),
        ("SocketsCores", 2, "sockets, cores"),
        ("CoresThreads", 4, "cores, threads"),
        ("SocketsCoresThreads", 4, "sockets, cores, threads"),
    ],
)
def test_vm_cpu_spread(across, have, fields):
    options = {} if across is None else {"spreadOptions": {"across": across}}
    pref = {"cpu": {"preferredCPUTopology": "spread", **options}, "requirements": {"cpu": {"guest": 8}}}
    cause = check_requirements(None, pref, vmi({"sockets": 1, "cores": 2, "threads": 2}))
    assert cause.field == ", ".join(f"spec.template.spec.domain.cpu.{f}" for f in fields.split(", "))
    assert cause.message.endswith(
        f"insufficient CPU resources of {have} vCPU provided by VirtualMachine, preference requires 8 vCPU "
        f"provided as {across or 'SocketsCores'}"
    )


def test_no_cpu_at_all():
    cause = check_requirements(None, {"requirements": {"cpu": {"guest": 1}}}, vmi())
    assert cause.field == "spec.template.spec.domain.cpu"
    assert cause.message == PREFIX + "no CPU resources provided by VirtualMachine, preference requires 1 vCPU"


def test_architecture_checked_last():
    pref = {"requirements": {"architecture": "arm64", "memory": {"guest": "1Gi"}}}
    cause = check_requirements(it(1, "2Gi"), pref, vmi(arch="amd64"))
    assert cause.field == "spec.template.spec.architecture"
    assert cause.message == PREFIX + "preference requires architecture arm64 but amd64 is being requested"
    assert check_requirements(it(1, "2Gi"), pref, vmi(arch="arm64")) is None


def test_no_preference_or_no_requirements():
    assert check_requirements(it(1, "1Gi"), None, vmi()) is None
    assert check_requirements(it(1, "1Gi"), {"cpu": {"preferredCPUTopology": "cores"}}, vmi()) is None
