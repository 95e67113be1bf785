"""Dedicated CPUs (domxml/pinning.py): <cputune> pinning and the NUMA passthrough cells, tune and pages."""
from __future__ import annotations

import pytest

from instancetype_webhook.domxml import DomainError, LauncherContext
from instancetype_webhook.domxml.features import features_element
from instancetype_webhook.domxml.iothreads import plan_iothreads
from instancetype_webhook.domxml.memory import memory_backing
from instancetype_webhook.domxml.pinning import NumaPassthrough, Pinning
from tests.kit.domxml import assert_xml, conversion, make_vmi


def test_dedicated_pinning_with_isolated_emulator_and_iothread():
    vmi = make_vmi({"cpu": {"sockets": 2, "dedicatedCpuPlacement": True, "isolateEmulatorThread": True},
                    "ioThreadsPolicy": "shared"}, volumes=[{"name": "d", "emptyDisk": {"capacity": "1Gi"}}])
    conv = conversion(vmi)
    assert_xml(Pinning(conv, plan_iothreads(conv)).cputune(),
               '<cputune><vcpupin vcpu="0" cpuset="0"/><vcpupin vcpu="1" cpuset="1"/>'
               '<iothreadpin iothread="1" cpuset="2"/><emulatorpin cpuset="2"/></cputune>')
    assert_xml(features_element(conv),
               '<features><acpi/><kvm><hint-dedicated state="on"/></kvm><vmport state="off"/></features>')


def test_dedicated_pinning_needs_enough_pod_cpus():
    conv = conversion(make_vmi({"cpu": {"sockets": 4, "dedicatedCpuPlacement": True}}), LauncherContext(cpuset=(0, 1)))
    with pytest.raises(DomainError, match="not enough CPUs"):
        Pinning(conv, plan_iothreads(conv))


def test_numa_passthrough_cells_tune_and_pages():
    vmi = make_vmi({"cpu": {"sockets": 2, "dedicatedCpuPlacement": True, "numa": {"guestMappingPassthrough": {}},
                            "realtime": {}},
                    "memory": {"guest": "2Gi", "hugepages": {"pageSize": "1Gi"}}})
    conv = conversion(vmi)
    numa = NumaPassthrough(conv, Pinning(conv, plan_iothreads(conv)))
    assert_xml(numa.numa(), '<numa><cell id="0" cpus="0,1" memory="2147483648" unit="b">'
               '<distances><sibling id="0" value="10"/></distances></cell></numa>')
    assert_xml(numa.numatune(), '<numatune><memory mode="strict" nodeset="0"/>'
               '<memnode cellid="0" mode="strict" nodeset="0"/></numatune>')
    backing = memory_backing(conv)
    numa.adjust_backing(backing)
    assert_xml(backing, '<memoryBacking><hugepages><page size="1073741824" unit="b" nodeset="0"/></hugepages>'
               '<source type="memfd"/><allocation mode="immediate"/><nosharepages/></memoryBacking>')


def test_numa_passthrough_requires_hugepages():
    conv = conversion(make_vmi({"cpu": {"dedicatedCpuPlacement": True, "numa": {"guestMappingPassthrough": {}}}}))
    with pytest.raises(DomainError, match="hugepages"):
        NumaPassthrough(conv, Pinning(conv, plan_iothreads(conv)))
