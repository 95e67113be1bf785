"""<qemu:commandline>: the Ignition config passed through fw_cfg when the VMI has the ignition annotation."""
from __future__ import annotations

from typing import Final

from lxml import etree

from instancetype_webhook.domxml.conversion import Conversion
from instancetype_webhook.domxml.elements import Element

QEMU_NS: Final = "http://libvirt.org/schemas/domain/qemu/1.0"
IGNITION_ANNOTATION: Final = "kubevirt.io/ignitiondata"
IGNITION_DIR: Final = "/var/run/kubevirt-ephemeral-disks/ignition-data"
IGNITION_FILE: Final = "data.ig"


def qemu_commandline(conv: Conversion, root: Element) -> None:
    data = conv.annotations.get(IGNITION_ANNOTATION) or ""
    if "ignition" not in data:
        return
    cmdline = etree.SubElement(root, f"{{{QEMU_NS}}}commandline")
    path = f"{IGNITION_DIR}/{conv.namespace}/{conv.name}/{IGNITION_FILE}"
    for value in ("-fw_cfg", f"name=opt/com.coreos/config,file={path}"):
        etree.SubElement(cmdline, f"{{{QEMU_NS}}}arg").set("value", value)
