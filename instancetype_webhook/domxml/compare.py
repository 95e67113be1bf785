"""Compare domain XML as XML: attribute order, whitespace between elements and empty-element form ignored."""
from __future__ import annotations

from lxml import etree

from instancetype_webhook.domxml.errors import DomainError


def _parse(xml: str) -> etree._Element:
    parser = etree.XMLParser(remove_blank_text=True, remove_comments=True)
    try:
        return etree.fromstring(xml.encode() if isinstance(xml, str) else xml, parser)
    except etree.XMLSyntaxError as exc:
        raise DomainError(f"not well-formed XML: {exc}") from exc


def _normalize(element: etree._Element) -> None:
    for child in element:
        _normalize(child)
    if len(element) or element.text is not None and not element.text.strip():
        element.text = None
    element.tail = None
    attrs = sorted(element.attrib.items())
    element.attrib.clear()
    for key, value in attrs:
        element.set(key, value)


def canonical_xml(xml: str) -> str:
    """A canonical text form: sorted attributes, no insignificant whitespace, C14N serialization."""
    root = _parse(xml)
    _normalize(root)
    return etree.tostring(root, method="c14n").decode()


def _path(leaf: etree._Element) -> str:
    parts = []
    element: etree._Element | None = leaf
    while element is not None:
        parent = element.getparent()
        tag = etree.QName(element).localname
        if parent is not None:
            same = [c for c in parent if c.tag == element.tag]
            if len(same) > 1:
                tag += f"[{same.index(element) + 1}]"
        parts.append(tag)
        element = parent
    return "/" + "/".join(reversed(parts))


def _difference(a: etree._Element, b: etree._Element) -> str | None:
    if a.tag != b.tag:
        return f"{_path(a)}: element <{etree.QName(a).localname}> != <{etree.QName(b).localname}>"
    if dict(a.attrib) != dict(b.attrib):
        return f"{_path(a)}: attributes {dict(a.attrib)} != {dict(b.attrib)}"
    if (a.text or None) != (b.text or None):
        return f"{_path(a)}: text {a.text!r} != {b.text!r}"
    for child_a, child_b in zip(a, b, strict=False):  # a length difference is reported below
        found = _difference(child_a, child_b)
        if found:
            return found
    if len(a) != len(b):
        longer, shorter = (a, b) if len(a) > len(b) else (b, a)
        extra = longer[len(shorter)]
        side = "first" if longer is a else "second"
        return f"{_path(extra)}: only in the {side} document"
    return None


def xml_equal(a: str, b: str) -> tuple[bool, str]:
    """(equal, first difference) of two XML documents compared canonically."""
    left, right = _parse(a), _parse(b)
    _normalize(left)
    _normalize(right)
    difference = _difference(left, right)
    return difference is None, difference or ""
