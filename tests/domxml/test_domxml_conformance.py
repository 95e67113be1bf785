"""Every public conformance case with a `domxml` section: our XML equals upstream's, canonically."""
from __future__ import annotations

import pytest

from app.domxml import DomainError, context_from_converter, render_domain, xml_equal
from tests.shared_data import conformance_cases

CASES = [case for case in conformance_cases() if "domxml" in case]


def test_the_public_corpus_has_domxml_cases():
    assert len(CASES) >= 57


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_domxml_case(case):
    section = case["domxml"]
    expected = section["expected"]
    context = context_from_converter(section["input"].get("converter"))
    if "error" in expected:
        with pytest.raises(DomainError) as info:
            render_domain(section["input"]["vmi"], context)
        assert str(info.value) == expected["error"]
        return
    xml = render_domain(section["input"]["vmi"], context)
    equal, where = xml_equal(xml, expected["xml"])
    assert equal, where


def test_render_does_not_modify_its_input():
    import copy

    vmi = CASES[0]["domxml"]["input"]["vmi"]
    before = copy.deepcopy(vmi)
    render_domain(vmi)
    assert vmi == before
