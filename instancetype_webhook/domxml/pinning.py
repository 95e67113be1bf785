"""Dedicated CPUs: vCPU/emulator/IOThread pinning on the pod cpuset, and guest NUMA passthrough."""
from __future__ import annotations

from typing import Final

from instancetype_webhook.domxml.context import NumaCell
from instancetype_webhook.domxml.conversion import Conversion
from instancetype_webhook.domxml.elements import Element, new, sub
from instancetype_webhook.domxml.errors import DomainError
from instancetype_webhook.domxml.iothreads import IOThreadPlan

SAME_CELL_DISTANCE: Final = 10


class Pinning:
    """The result of fitting the vCPUs onto the pod's CPUs."""

    def __init__(self, conv: Conversion, plan: IOThreadPlan) -> None:
        self.conv = conv
        emulator_threads = 1 if conv.isolate_emulator else 0
        self.cpuset = conv.ctx.pod_cpuset(conv.vcpus, True, emulator_threads)
        if len(self.cpuset) < conv.vcpus + emulator_threads:
            raise DomainError(f"not enough CPUs in the pod cpuset {list(self.cpuset)} for {conv.vcpus} dedicated vCPUs")
        self.vcpu_pins = [(vcpu, self.cpuset[vcpu]) for vcpu in range(conv.vcpus)]
        self.emulator = self.cpuset[conv.vcpus] if emulator_threads else None
        self.iothread_pins = self._iothread_pins(plan) if plan.enabled and plan.total > 0 else []

    def _iothread_pins(self, plan: IOThreadPlan) -> list[tuple[int, str]]:
        if self.emulator is not None:
            return [(1, str(self.emulator))]
        vcpus, cpus = self.conv.vcpus, list(self.cpuset)
        if plan.total >= vcpus:
            return [(thread, str(cpus[thread % vcpus])) for thread in range(1, plan.total + 1)]
        pins, current, series = [], 0, vcpus % plan.total
        for thread in range(1, plan.total + 1):
            size = vcpus // plan.total + (1 if thread <= series else 0)
            pins.append((thread, ",".join(str(c) for c in cpus[current:current + size])))
            current += size
        return pins

    def cputune(self) -> Element:
        cputune = new("cputune")
        for vcpu, cpu in self.vcpu_pins:
            sub(cputune, "vcpupin", {"vcpu": vcpu, "cpuset": cpu})
        for thread, cpuset in self.iothread_pins:
            sub(cputune, "iothreadpin", {"iothread": thread, "cpuset": cpuset})
        if self.emulator is not None:
            sub(cputune, "emulatorpin", {"cpuset": self.emulator})
        return cputune


class NumaPassthrough:
    """Guest NUMA cells mirroring the host cells the pinned vCPUs landed on (hugepages required)."""

    def __init__(self, conv: Conversion, pinning: Pinning) -> None:
        page = conv.hugepage_size
        if not page:
            raise DomainError("passing through a numa topology is restricted to VMIs with hugepages enabled")
        cells = conv.ctx.host_numa_cells(pinning.cpuset)
        by_cpu = {cpu: cell for cell in cells for cpu in cell.cpus}
        used: dict[int, list[int]] = {}
        for vcpu, cpu in pinning.vcpu_pins:
            if cpu not in by_cpu:
                raise DomainError(f"vcpu {vcpu} is mapped to a not existing host cpu set {cpu}")
            used.setdefault(by_cpu[cpu].id, []).append(vcpu)
        self.cells: list[tuple[int, NumaCell, list[int]]] = [
            (index, cell, used[cell.id]) for index, cell in enumerate(c for c in cells if c.id in used)]
        memory, count = conv.guest_memory, len(self.cells)
        if memory < count * page:
            raise DomainError("not enough memory requested to allocate at least one hugepage per numa node")
        if memory % page:
            raise DomainError(f"requested memory can't be divided through the numa page size: {memory} mod {page} != 0")
        extra = memory % (page * count) // page
        per_cell = (memory - extra * page) // count
        self.memory = [per_cell + (page if index < extra else 0) for index in range(count)]
        self.page = page
        self.realtime = conv.realtime
        self.distances = conv.ctx.numa_distances

    def numa(self) -> Element:
        numa = new("numa")
        for (index, cell, vcpus), memory in zip(self.cells, self.memory, strict=True):
            cell_el = sub(numa, "cell", {"id": index, "cpus": ",".join(str(v) for v in vcpus),
                                         "memory": memory, "unit": "b"})
            if not self.distances:
                continue
            distances = sub(cell_el, "distances")
            for other_index, other, _ in self.cells:
                value = SAME_CELL_DISTANCE if other.id == cell.id else (cell.distances or {}).get(other.id, 20)
                sub(distances, "sibling", {"id": other_index, "value": value})
        return numa

    def numatune(self) -> Element:
        numatune = new("numatune")
        sub(numatune, "memory", {"mode": "strict", "nodeset": ",".join(str(c.id) for _, c, _ in self.cells)})
        for index, cell, _ in self.cells:
            sub(numatune, "memnode", {"cellid": index, "mode": "strict", "nodeset": cell.id})
        return numatune

    def adjust_backing(self, backing: Element) -> None:
        hugepages = backing.find("hugepages")
        if hugepages is None:  # not reached: __init__ refuses a VMI without hugepages
            raise DomainError("passing through a numa topology is restricted to VMIs with hugepages enabled")
        for index, _, _ in self.cells:
            sub(hugepages, "page", {"size": self.page, "unit": "b", "nodeset": index})
        sub(backing, "allocation", {"mode": "immediate"})
        if self.realtime:
            sub(backing, "nosharepages")
