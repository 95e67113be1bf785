"""Domain XML compared as XML (domxml/compare.py): canonical_xml and xml_equal's first difference."""
from __future__ import annotations

import pytest

from instancetype_webhook.domxml import DomainError, canonical_xml, xml_equal


def test_canonical_xml_ignores_attribute_order_whitespace_and_empty_forms():
    a = '<a x="1" y="2">\n  <b></b>\n  <c>t</c>\n</a>'
    b = '<a y="2" x="1"><b/><c>t</c></a>'
    assert canonical_xml(a) == canonical_xml(b)
    assert xml_equal(a, b) == (True, "")
    equal, where = xml_equal(a, '<a y="2" x="1"><c>t</c><b/></a>')
    assert not equal and where.startswith("/a/b")
    equal, where = xml_equal(a, '<a y="2" x="1"><b/><c>u</c></a>')
    assert not equal and "text" in where
    with pytest.raises(DomainError):
        canonical_xml("<a>")
