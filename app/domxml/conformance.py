"""The conformance runner's `domxml` section check (imported by app.conformance as a plugin).

render_domain(input.vmi, context from input.converter) must equal expected.xml canonically, or fail when
upstream's converter failed (the error texts are compared after that).
"""
from __future__ import annotations

from typing import Any

from app.conformance import Difference, register_section
from app.domxml import DomainError, context_from_converter, render_domain, xml_equal


def check_domxml(case: dict[str, Any]) -> Difference | None:
    section = case["domxml"]
    case_input, expected = section.get("input") or {}, section.get("expected") or {}
    try:
        xml = render_domain(case_input.get("vmi") or {}, context_from_converter(case_input.get("converter")))
    except DomainError as exc:
        if "error" in expected:
            return None if str(exc) == expected["error"] else Difference("domxml.error", str(exc), expected["error"])
        return Difference("domxml", f"error: {exc}", "xml")
    if "error" in expected:
        return Difference("domxml", "xml", f"error: {expected['error']}")
    equal, where = xml_equal(xml, expected.get("xml", ""))
    return None if equal else Difference(f"domxml{where}", "our XML", "upstream's XML")


register_section("domxml", check_domxml)
