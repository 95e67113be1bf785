"""The conformance runner's domain XML checks, one per member:

- `domxml.expected`: render_domain(input.vmi) under the case's kubevirtConfiguration, with the context from
  input.converter, equals expected.xml canonically (or fails with upstream's error text);
- `domxml.fromVm`: the flat `expected.vm` started as virt-controller starts it (domxml.vmi.vmi_from_vm, with
  input.vmi's uid and firmware uuid), then rendered the same way, equals fromVm.xml (or its error).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from instancetype_webhook.conformance.cases import case_settings
from instancetype_webhook.conformance.compare import Difference
from instancetype_webhook.domxml import (
    DomainError,
    context_from_converter,
    domain_config_from_settings,
    render_domain,
    vmi_from_vm,
    xml_equal,
)


def render_member(case: dict[str, Any], vmi: Callable[[], dict[str, Any]]) -> str:
    """The XML of ``vmi()`` under the case's kubevirtConfiguration and input.converter (DomainError on refusal)."""
    section = case["domxml"]
    case_input = section.get("input") or {}
    config = domain_config_from_settings(case_settings(case.get("input") or {}))
    return render_domain(vmi(), context_from_converter(case_input.get("converter")), config=config)


def _compare(member: str, render: Callable[[], str], expected: dict[str, Any]) -> Difference | None:
    try:
        xml = render()
    except DomainError as exc:
        if "error" in expected:
            return None if str(exc) == expected["error"] else Difference(f"{member}.error", str(exc), expected["error"])
        return Difference(member, f"error: {exc}", "xml")
    if "error" in expected:
        return Difference(member, "xml", f"error: {expected['error']}")
    equal, where = xml_equal(xml, expected.get("xml", ""))
    return None if equal else Difference(f"{member}{where}", "our XML", "upstream's XML")


def started_vmi(case: dict[str, Any]) -> dict[str, Any]:
    """The VMI virt-controller creates for the case's flat VM, stored after a CREATE (input.vmi's firmware
    uuid in the template when it has none) and given input.vmi's uid."""
    section = case["domxml"]
    input_vmi = (section.get("input") or {}).get("vmi") or {}
    vm = _with_firmware_uuid(case["expected"]["vm"], ((input_vmi.get("spec") or {}).get("domain") or {})
                             .get("firmware", {}).get("uuid"))
    return vmi_from_vm(vm, uid=(input_vmi.get("metadata") or {}).get("uid"))


def _with_firmware_uuid(vm: dict[str, Any], firmware_uuid: str | None) -> dict[str, Any]:
    template_spec = ((vm.get("spec") or {}).get("template") or {}).get("spec") or {}
    firmware = (template_spec.get("domain") or {}).get("firmware") or {}
    if firmware.get("uuid") or not firmware_uuid:
        return vm
    domain = {**(template_spec.get("domain") or {}), "firmware": {**firmware, "uuid": firmware_uuid}}
    template = {**vm["spec"]["template"], "spec": {**template_spec, "domain": domain}}
    return {**vm, "spec": {**vm["spec"], "template": template}}


def check_expected(case: dict[str, Any]) -> Difference | None:
    section = case["domxml"]
    vmi = (section.get("input") or {}).get("vmi") or {}
    return _compare("domxml.expected", lambda: render_member(case, lambda: vmi), section.get("expected") or {})


def check_from_vm(case: dict[str, Any]) -> Difference | None:
    expected = case["domxml"]["fromVm"]
    if "vm" not in case.get("expected", {}):
        return None if "error" in expected else Difference("domxml.fromVm", "no flat VM", "xml")
    return _compare("domxml.fromVm", lambda: render_member(case, lambda: started_vmi(case)), expected)
