"""libvirt's domain RNG schema, with the deviations upstream KubeVirt's own XML has (shared by the tests)."""
from __future__ import annotations

import functools
from pathlib import Path

from lxml import etree

SCHEMA = Path("/usr/share/libvirt/schemas/domain.rng")


def kubevirt_quirks_removed(xml: str) -> str:
    """What `libvirt-check.sh validate` tolerates with LIBVIRT_CHECK_KUBEVIRT_QUIRKS=1: empty sysinfo
    children and name= on the <source> of block disks."""
    root = etree.fromstring(xml.encode())
    for sysinfo in root.iterfind("sysinfo"):
        for child in list(sysinfo):
            empty = len(child) == 0 and not (child.text or "").strip()
            if child.tag in ("bios", "baseBoard", "chassis", "system") and empty:
                sysinfo.remove(child)
    for source in root.iterfind("devices/disk[@type='block']/source"):
        source.attrib.pop("name", None)
    return etree.tostring(root, encoding="unicode")


def upstream_rng_deviations(xml: str) -> tuple[str, list[str]]:
    """The XML with upstream's two extra schema deviations patched out, and which ones were found."""
    root = etree.fromstring(xml.encode())
    found = []
    for address in root.iterfind("devices/hostdev/source/address"):
        if "type" in address.attrib:
            del address.attrib["type"]
            found.append("hostdev-source-address-type")
    for feature in root.iterfind("cpu/feature"):
        if "policy" not in feature.attrib:
            feature.set("policy", "require")
            found.append("cpu-feature-without-policy")
    return etree.tostring(root, encoding="unicode"), found


@functools.cache
def domain_schema() -> etree.RelaxNG:
    """libvirt's installed domain schema (what virt-xml-validate uses); needs the libvirt packages."""
    return etree.RelaxNG(etree.parse(str(SCHEMA)))


def schema_problem(xml: str) -> str | None:
    """Why libvirt's schema refuses `xml` (after the tolerated KubeVirt deviations), or None."""
    schema = domain_schema()
    patched, _ = upstream_rng_deviations(xml)
    if schema.validate(etree.fromstring(kubevirt_quirks_removed(patched).encode())):
        return None
    return str(schema.error_log.last_error)
