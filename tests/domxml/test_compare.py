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


def test_comments_and_whitespace_only_text_are_ignored_but_text_is_not_stripped():
    assert xml_equal("<a><!-- note --><b/></a>", "<a>\n  <b/>\n</a>") == (True, "")
    assert not xml_equal("<a>t</a>", "<a> t </a>")[0]  # the text of a leaf is compared as written
    assert xml_equal("<a>  </a>", "<a/>") == (True, "")  # a leaf of blanks is empty


def test_the_first_difference_names_its_path():
    assert xml_equal("<a/>", "<b/>") == (False, "/a: element <a> != <b>")
    equal, where = xml_equal('<a><b x="1"/></a>', '<a><b x="2"/></a>')
    assert not equal and where == "/a/b: attributes {'x': '1'} != {'x': '2'}"
    equal, where = xml_equal("<a><b/><b/></a>", "<a><b/><b><c/></b></a>")
    assert not equal and where == "/a/b[2]/c: only in the second document"
    equal, where = xml_equal("<a><b/><c/></a>", "<a><b/></a>")
    assert not equal and where == "/a/c: only in the first document"


def test_namespaces_are_compared_by_uri_not_prefix():
    assert xml_equal('<a xmlns:q="urn:x"><q:b/></a>', '<a xmlns:z="urn:x"><z:b/></a>')[0]
    assert not xml_equal('<a xmlns:q="urn:x"><q:b/></a>', '<a xmlns:q="urn:y"><q:b/></a>')[0]


def test_malformed_xml_is_a_domain_error_from_both_functions():
    with pytest.raises(DomainError, match="not well-formed"):
        xml_equal("<a/>", "<a>")
    with pytest.raises(DomainError, match="not well-formed"):
        canonical_xml("")
    assert canonical_xml('<a y="2" x="1"><b></b></a>') == '<a x="1" y="2"><b></b></a>'
