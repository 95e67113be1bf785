"""<memory>, <maxMemory> and <memoryBacking> (domxml/memory.py), with literal expected XML."""
from __future__ import annotations

from instancetype_webhook.domxml.memory import memory_backing, memory_elements
from tests.kit.domxml import assert_xml, conversion, make_vmi


def test_memory_in_bytes_with_hotplug_maximum():
    conv = conversion(make_vmi({"memory": {"guest": "2Gi"}}))
    assert_xml(memory_elements(conv), '<memory unit="b">2147483648</memory>'
                                      '<maxMemory unit="b" slots="0">8589934592</maxMemory>')


def test_memory_below_1gi_gets_no_hotplug_maximum():
    conv = conversion(make_vmi({"memory": {"guest": "512Mi"}}))
    assert_xml(memory_elements(conv), '<memory unit="b">536870912</memory>')
    assert memory_backing(conv) is None


def test_memory_from_requests_and_fractional_bytes_floored():
    conv = conversion(make_vmi({"memory": {}, "resources": {"requests": {"memory": "1.5"}}}))
    assert_xml(memory_elements(conv), '<memory unit="b">1</memory>')


def test_hugepages_use_memfd_without_page_size():
    conv = conversion(make_vmi({"memory": {"guest": "4Gi", "hugepages": {"pageSize": "2Mi"}}}))
    assert_xml(memory_backing(conv), '<memoryBacking><hugepages/><source type="memfd"/></memoryBacking>')


def test_memfd_annotation_off_keeps_hugepages_only():
    conv = conversion(make_vmi({"memory": {"guest": "4Gi", "hugepages": {"pageSize": "2Mi"}}},
                               annotations={"kubevirt.io/memfd": "false"}))
    assert_xml(memory_backing(conv), '<memoryBacking><hugepages/></memoryBacking>')
