"""<qemu:commandline> (domxml/qemucmd.py): the Ignition config passed through fw_cfg."""
from __future__ import annotations

from tests.kit.domxml import assert_xml, conversion, make_vmi


def test_ignition_annotation_adds_fw_cfg_arguments():
    from lxml import etree

    from instancetype_webhook.domxml.qemucmd import qemu_commandline

    root = etree.Element("domain", nsmap={"qemu": "http://libvirt.org/schemas/domain/qemu/1.0"})
    qemu_commandline(conversion(make_vmi(annotations={"kubevirt.io/ignitiondata": '{"ignition": {}}'})), root)
    assert_xml(root, '<domain xmlns:qemu="http://libvirt.org/schemas/domain/qemu/1.0"><qemu:commandline>'
               '<qemu:arg value="-fw_cfg"/><qemu:arg value="name=opt/com.coreos/config,'
               'file=/var/run/kubevirt-ephemeral-disks/ignition-data/ns1/vm1/data.ig"/></qemu:commandline></domain>')
    plain = etree.Element("domain")
    qemu_commandline(conversion(make_vmi()), plain)
    assert len(plain) == 0


def test_ignition_annotation_without_an_ignition_key_adds_nothing():
    from lxml import etree

    from instancetype_webhook.domxml.qemucmd import qemu_commandline

    root = etree.Element("domain")
    qemu_commandline(conversion(make_vmi(annotations={"kubevirt.io/ignitiondata": '{"other": 1}'})), root)
    qemu_commandline(conversion(make_vmi(annotations={"kubevirt.io/ignitiondata": ""})), root)
    assert len(root) == 0
