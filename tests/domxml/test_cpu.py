"""<cpu> and <vcpu>/<vcpus> (domxml/cpu.py): model, features, topology, hotplug vCPUs, the synthetic NUMA cell."""
from __future__ import annotations

from instancetype_webhook.domxml.cpu import cpu_element, vcpu_elements
from tests.kit.domxml import assert_xml, conversion, make_vmi


def test_cpu_default_host_model_and_hotplug_vcpus():
    conv = conversion(make_vmi({"cpu": {"sockets": 1, "cores": 2, "threads": 1}}))
    assert_xml(cpu_element(conv), '<cpu mode="host-model"><topology sockets="4" cores="2" threads="1"/></cpu>')
    assert_xml(vcpu_elements(conv), '<vcpu placement="static">8</vcpu><vcpus>'
               '<vcpu id="0" enabled="yes" hotpluggable="no"/><vcpu id="1" enabled="yes" hotpluggable="no"/>'
               '<vcpu id="2" enabled="no" hotpluggable="yes"/><vcpu id="3" enabled="no" hotpluggable="yes"/>'
               '<vcpu id="4" enabled="no" hotpluggable="yes"/><vcpu id="5" enabled="no" hotpluggable="yes"/>'
               '<vcpu id="6" enabled="no" hotpluggable="yes"/><vcpu id="7" enabled="no" hotpluggable="yes"/>'
               '</vcpus>')


def test_cpu_named_model_disables_mpx_after_user_features():
    conv = conversion(make_vmi({"cpu": {"model": "Haswell-noTSX",
                                        "features": [{"name": "pcid", "policy": "require"}]}}))
    assert_xml(cpu_element(conv), '<cpu mode="custom"><model>Haswell-noTSX</model>'
               '<feature name="pcid" policy="require"/><feature name="mpx" policy="disable"/>'
               '<topology sockets="4" cores="1" threads="1"/></cpu>')


def test_cpu_topology_from_cpu_limit_without_hotplug_when_max_sockets_set():
    conv = conversion(make_vmi({"cpu": {"maxSockets": 3}, "resources": {"limits": {"cpu": "3"}}}))
    assert_xml(cpu_element(conv), '<cpu mode="host-model"><topology sockets="3" cores="1" threads="1"/></cpu>')


def test_hugepages_add_synthetic_numa_cell_over_all_vcpus():
    conv = conversion(make_vmi({"cpu": {"sockets": 2}, "memory": {"guest": "4Gi", "hugepages": {"pageSize": "1Gi"}}}))
    assert_xml(cpu_element(conv), '<cpu mode="host-model"><topology sockets="8" cores="1" threads="1"/>'
               '<numa><cell id="0" cpus="0-7" memory="4194304" unit="KiB"/></numa></cpu>')
