"""Shared helpers for the domxml tests: a tiny VMI factory and an XML assertion."""
from __future__ import annotations

import copy

from lxml import etree

from instancetype_webhook.domxml import LauncherContext, xml_equal
from instancetype_webhook.domxml.conversion import Conversion
from instancetype_webhook.domxml.vmi_defaults import apply_vmi_defaults

UID = "11111111-2222-3333-4444-555555555555"
FW_UUID = "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"


def make_vmi(domain: dict | None = None, volumes: list | None = None, networks: list | None = None,
             annotations: dict | None = None, **spec: object) -> dict:
    dom = {"memory": {"guest": "512Mi"}, "devices": {}, "firmware": {"uuid": FW_UUID}}
    dom.update(copy.deepcopy(domain or {}))
    body = {"domain": dom, **spec}
    if volumes is not None:
        body["volumes"] = volumes
    if networks is not None:
        body["networks"] = networks
    meta = {"name": "vm1", "namespace": "ns1", "uid": UID}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance", "metadata": meta, "spec": body}


def conversion(vmi: dict, ctx: LauncherContext | None = None, defaults: bool = True) -> Conversion:
    return Conversion(vmi=apply_vmi_defaults(vmi) if defaults else vmi, ctx=ctx or LauncherContext())


def render(element_or_list) -> str:
    if isinstance(element_or_list, list):
        return "".join(etree.tostring(e, encoding="unicode") for e in element_or_list)
    return etree.tostring(element_or_list, encoding="unicode")


def assert_xml(element_or_list, expected: str) -> None:
    got = render(element_or_list)
    if isinstance(element_or_list, list):
        got, expected = f"<list>{got}</list>", f"<list>{expected}</list>"
    equal, where = xml_equal(got, expected)
    assert equal, f"{where}\n got: {got}\nwant: {expected}"
