"""Hypothesis strategies: instance types, preferences and VMs as users write them.

Every drawn object fits KubeVirt's CRD schemas (`test_strategies.py` checks each kind against the
openAPIV3Schema in tests/data/shared/kubevirt-crds) and passes the instancetype/preference webhooks' own
admission (`admit_object`), as a real API server would require before a VM could reference it. The VM
draws the fields an instance type owns (so that conflicts happen) as often as those it does not.

Half of the instance types and preferences are the bundled common-instancetypes objects (as users
reference them), half are drawn field by field. `cases()` draws one scenario:
`Case(vm, objects, instancetype, preference)`, the referenced objects namespaced
(`VirtualMachineInstancetype` / `VirtualMachinePreference` in the VM's namespace) or cluster-scoped,
sometimes only one of the two, sometimes neither.
"""
from __future__ import annotations

import copy
import functools
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from instancetype_webhook.kubevirt.vm_webhook import admit_object
from instancetype_webhook.sources.catalog import load_catalog

NAMESPACE = "props"
IT_API = "instancetype.kubevirt.io/v1beta1"

memory_sizes = st.sampled_from(["512Mi", "1Gi", "1536Mi", "2Gi", "3Gi", "4Gi", "8Gi", "1G", "2G"])
small_ints = st.integers(min_value=1, max_value=4)
label_keys = st.sampled_from(["example.org/a", "example.org/b", "team", "tier"])
label_values = st.sampled_from(["x", "y", "blue", "1"])
label_maps = st.dictionaries(label_keys, label_values, min_size=1, max_size=2)
cpu_models = st.sampled_from(["host-passthrough", "host-model", "Haswell-noTSX", "EPYC"])
gpus = st.lists(st.fixed_dictionaries({"name": st.sampled_from(["gpu1", "gpu2"]),
                                       "deviceName": st.sampled_from(["nvidia.com/A10", "nvidia.com/T4"])}),
                min_size=1, max_size=2, unique_by=lambda g: g["name"])
host_devices = st.lists(st.fixed_dictionaries({"name": st.just("hd1"), "deviceName": st.just("intel.com/qat")}),
                        min_size=1, max_size=1)
features = st.lists(st.fixed_dictionaries({"name": st.sampled_from(["vmx", "pcid", "ssse3"])},
                                          optional={"policy": st.sampled_from(["require", "optional", "disable"])}),
                    min_size=1, max_size=2, unique_by=lambda f: f["name"])


@st.composite
def _maybe(draw: st.DrawFn, out: dict[str, Any], key: str, values: st.SearchStrategy[Any], p: int = 3) -> None:
    """Set out[key] to a drawn value about once in `p` draws."""
    if draw(st.integers(0, p - 1)) == 0:
        out[key] = draw(values)


@st.composite
def instancetype_specs(draw: st.DrawFn) -> dict[str, Any]:
    cpu: dict[str, Any] = {"guest": draw(st.sampled_from([1, 2, 3, 4, 6, 8, 12, 16]))}
    draw(_maybe(cpu, "model", cpu_models, 6))
    draw(_maybe(cpu, "dedicatedCPUPlacement", st.booleans(), 5))
    draw(_maybe(cpu, "isolateEmulatorThread", st.booleans(), 8))
    draw(_maybe(cpu, "numa", st.just({"guestMappingPassthrough": {}}), 10))
    draw(_maybe(cpu, "realtime", st.sampled_from([{}, {"mask": "0"}]), 10))
    draw(_maybe(cpu, "maxSockets", st.integers(1, 32), 5))
    memory: dict[str, Any] = {"guest": draw(memory_sizes)}
    draw(_maybe(memory, "hugepages", st.sampled_from([{"pageSize": "2Mi"}, {"pageSize": "1Gi"}]), 6))
    draw(_maybe(memory, "maxGuest", st.sampled_from(["8Gi", "16Gi"]), 6))
    if "hugepages" not in memory:  # the webhook refuses overcommitPercent with hugepages
        draw(_maybe(memory, "overcommitPercent", st.integers(0, 100), 4))
    spec: dict[str, Any] = {"cpu": cpu, "memory": memory}
    draw(_maybe(spec, "nodeSelector", label_maps, 6))
    draw(_maybe(spec, "schedulerName", st.sampled_from(["fast", "slow"]), 8))
    draw(_maybe(spec, "gpus", gpus, 8))
    draw(_maybe(spec, "hostDevices", host_devices, 10))
    draw(_maybe(spec, "ioThreadsPolicy", st.sampled_from(["shared", "auto"]), 6))
    draw(_maybe(spec, "ioThreads", st.builds(lambda n: {"supplementalPoolThreadCount": n}, small_ints), 12))
    draw(_maybe(spec, "annotations", label_maps, 5))
    return spec


TOPOLOGIES = ["sockets", "cores", "threads", "spread", "any", "preferSockets", "preferCores", "preferThreads",
              "preferSpread", "preferAny"]


@st.composite
def _cpu_preferences(draw: st.DrawFn) -> dict[str, Any]:
    cpu: dict[str, Any] = {}
    draw(_maybe(cpu, "preferredCPUTopology", st.sampled_from(TOPOLOGIES), 2))
    if cpu.get("preferredCPUTopology") in ("spread", "preferSpread") and draw(st.booleans()):
        across = draw(st.sampled_from(["SocketsCores", "CoresThreads", "SocketsCoresThreads", None]))
        options: dict[str, Any] = {} if across is None else {"across": across}
        if across == "CoresThreads":
            options["ratio"] = 2  # the only ratio the webhook allows there
        elif draw(st.booleans()):
            options["ratio"] = draw(st.integers(1, 4))
        cpu["spreadOptions"] = options
    draw(_maybe(cpu, "preferredCPUFeatures", features, 6))
    return cpu


@st.composite
def _device_preferences(draw: st.DrawFn) -> dict[str, Any]:
    devices: dict[str, Any] = {}
    draw(_maybe(devices, "preferredDiskBus", st.sampled_from(["virtio", "sata", "scsi"])))
    draw(_maybe(devices, "preferredCdromBus", st.sampled_from(["sata", "scsi"]), 5))
    draw(_maybe(devices, "preferredInterfaceModel", st.sampled_from(["virtio", "e1000e"])))
    draw(_maybe(devices, "preferredDiskDedicatedIoThread", st.booleans(), 6))
    draw(_maybe(devices, "preferredAutoattachGraphicsDevice", st.booleans(), 6))
    draw(_maybe(devices, "preferredAutoattachMemBalloon", st.booleans(), 6))
    draw(_maybe(devices, "preferredRng", st.just({}), 5))
    draw(_maybe(devices, "preferredNetworkInterfaceMultiQueue", st.booleans(), 6))
    draw(_maybe(devices, "preferredTPM", st.just({}), 8))
    if draw(st.integers(0, 5)) == 0:
        devices["preferredInputBus"] = draw(st.sampled_from(["usb", "virtio"]))
        devices["preferredInputType"] = "tablet"
    return devices


@st.composite
def preference_specs(draw: st.DrawFn) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    draw(_maybe(spec, "cpu", _cpu_preferences(), 2))
    draw(_maybe(spec, "devices", _device_preferences(), 2))
    draw(_maybe(spec, "features", st.fixed_dictionaries({}, optional={
        "preferredAcpi": st.just({}), "preferredApic": st.just({}), "preferredSmm": st.just({})}), 4))
    draw(_maybe(spec, "firmware", st.sampled_from([{"preferredUseEfi": True}, {"preferredUseBios": True},
                                                    {"preferredUseEfi": True, "preferredUseSecureBoot": False}]), 5))
    draw(_maybe(spec, "machine", st.just({"preferredMachineType": "q35"}), 5))
    draw(_maybe(spec, "clock", st.just({"preferredClockOffset": {"utc": {}}}), 6))
    draw(_maybe(spec, "preferredTerminationGracePeriodSeconds", st.integers(0, 600), 6))
    if draw(st.integers(0, 3)) == 0:
        requirements: dict[str, Any] = {}
        draw(_maybe(requirements, "cpu", st.builds(lambda n: {"guest": n}, st.sampled_from([1, 2, 4])), 2))
        draw(_maybe(requirements, "memory", st.builds(lambda m: {"guest": m}, st.sampled_from(["1Gi", "2Gi"])), 2))
        if requirements:
            spec["requirements"] = requirements
    draw(_maybe(spec, "annotations", label_maps, 6))
    return spec


@st.composite
def _vm_cpu(draw: st.DrawFn) -> dict[str, Any]:
    cpu: dict[str, Any] = {}
    for key in ("sockets", "cores", "threads"):
        draw(_maybe(cpu, key, st.integers(0, 4), 6))
    draw(_maybe(cpu, "model", cpu_models, 8))
    draw(_maybe(cpu, "dedicatedCpuPlacement", st.booleans(), 8))
    draw(_maybe(cpu, "isolateEmulatorThread", st.booleans(), 10))
    draw(_maybe(cpu, "numa", st.just({"guestMappingPassthrough": {}}), 12))
    draw(_maybe(cpu, "realtime", st.just({}), 12))
    draw(_maybe(cpu, "maxSockets", st.integers(1, 16), 8))
    draw(_maybe(cpu, "features", features, 8))
    return cpu


@st.composite
def _vm_resources(draw: st.DrawFn) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    for part in ("requests", "limits"):
        values: dict[str, Any] = {}
        draw(_maybe(values, "cpu", st.sampled_from(["1", "2", "500m"]), 8))
        draw(_maybe(values, "memory", memory_sizes, 8))
        if values:
            resources[part] = values
    return resources


@st.composite
def _vm_domain(draw: st.DrawFn) -> dict[str, Any]:
    domain: dict[str, Any] = {"devices": {}}
    cpu = draw(_vm_cpu())
    if cpu or draw(st.integers(0, 5)) == 0:
        domain["cpu"] = cpu
    memory: dict[str, Any] = {}
    draw(_maybe(memory, "guest", memory_sizes, 8))
    draw(_maybe(memory, "hugepages", st.just({"pageSize": "2Mi"}), 12))
    draw(_maybe(memory, "maxGuest", st.just("16Gi"), 12))
    if memory:
        domain["memory"] = memory
    resources = draw(_vm_resources())
    if resources:
        domain["resources"] = resources
    draw(_maybe(domain, "ioThreadsPolicy", st.sampled_from(["shared", "auto"]), 10))
    draw(_maybe(domain, "ioThreads", st.builds(lambda n: {"supplementalPoolThreadCount": n}, small_ints), 14))
    draw(_maybe(domain["devices"], "gpus", gpus, 10))
    draw(_maybe(domain["devices"], "hostDevices", host_devices, 12))
    if draw(st.booleans()):
        domain["devices"]["disks"] = [{"name": "rootdisk", **draw(st.sampled_from(
            [{}, {"disk": {}}, {"disk": {"bus": "virtio"}}, {"disk": {"bus": "sata"}}]))}]
    if draw(st.booleans()):
        domain["devices"]["interfaces"] = [{"name": "default", **draw(st.sampled_from(
            [{"masquerade": {}}, {"masquerade": {}, "model": "e1000e"}, {"bridge": {}}]))}]
    return domain


def base_vm(name: str) -> dict[str, Any]:
    return {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
            "metadata": {"name": name, "namespace": NAMESPACE, "uid": "00000000-0000-4000-8000-000000000001"},
            "spec": {"runStrategy": "Halted", "template": {"metadata": {}, "spec": {
                "domain": {"devices": {}},
                "volumes": [{"name": "rootdisk", "containerDisk": {"image": "quay.io/containerdisks/fedora:41"}}]}}}}


@st.composite
def vms(draw: st.DrawFn) -> dict[str, Any]:
    vm = base_vm(draw(st.sampled_from(["a", "vm-1", "web"])))
    template = vm["spec"]["template"]
    spec = template["spec"]
    spec["domain"] = draw(_vm_domain())
    if "interfaces" in spec["domain"]["devices"]:
        spec["networks"] = [{"name": "default", "pod": {}}]
    draw(_maybe(spec, "nodeSelector", st.one_of(st.just({}), label_maps), 8))
    draw(_maybe(spec, "schedulerName", st.sampled_from(["fast", "other"]), 10))
    draw(_maybe(template["metadata"], "annotations", label_maps, 5))
    draw(_maybe(vm["metadata"], "labels", label_maps, 4))
    return vm


@functools.cache
def _catalogue(kind: str) -> tuple[dict[str, Any], ...]:
    return tuple(o["spec"] for o in load_catalog().objects() if o["kind"] == kind)


def catalogue_specs(kind: str) -> st.SearchStrategy[dict[str, Any]]:
    """The spec of one of the bundled common-instancetypes objects of `kind` (a copy)."""
    return st.sampled_from(_catalogue(kind)).map(copy.deepcopy)


@dataclass(frozen=True)
class Case:
    vm: dict[str, Any]
    objects: tuple[dict[str, Any], ...]
    instancetype: dict[str, Any] | None  # the referenced instance type's spec
    preference: dict[str, Any] | None

    def __repr__(self) -> str:  # what hypothesis prints for a falsifying example
        return f"Case(vm={self.vm!r}, objects={list(self.objects)!r})"


def _object(kind: str, name: str, spec: dict[str, Any], namespaced: bool) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "uid": f"uid-{kind}-{name}", "generation": 1}
    if namespaced:
        metadata["namespace"] = NAMESPACE
    return {"apiVersion": IT_API, "kind": kind, "metadata": metadata, "spec": spec}


def admitted(obj: dict[str, Any]) -> bool:
    return admit_object(obj).allowed


@st.composite
def cases(draw: st.DrawFn) -> Case:
    vm = draw(vms())
    objects: list[dict[str, Any]] = []
    instancetype = preference = None
    if draw(st.integers(0, 5)) > 0:
        namespaced = draw(st.booleans())
        kind = "VirtualMachineInstancetype" if namespaced else "VirtualMachineClusterInstancetype"
        instancetype = draw(st.one_of(instancetype_specs(), catalogue_specs("VirtualMachineClusterInstancetype")))
        objects.append(_object(kind, "it", instancetype, namespaced))
        vm["spec"]["instancetype"] = {"kind": kind, "name": "it"}
    if draw(st.integers(0, 5)) > 1:
        namespaced = draw(st.booleans())
        kind = "VirtualMachinePreference" if namespaced else "VirtualMachineClusterPreference"
        preference = draw(st.one_of(preference_specs(), catalogue_specs("VirtualMachineClusterPreference")))
        objects.append(_object(kind, "pref", preference, namespaced))
        vm["spec"]["preference"] = {"kind": kind, "name": "pref"}
    return Case(vm, tuple(objects), instancetype, preference)
