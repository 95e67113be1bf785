"""The small lxml helper every builder uses to add an element with attributes in a fixed order."""
from __future__ import annotations

from collections.abc import Mapping

from lxml import etree

Element = etree._Element


def sub(parent: Element, tag: str, attrs: Mapping[str, object] | None = None, text: object = None) -> Element:
    """Append ``<tag attrs>text</tag>`` to ``parent``; attributes whose value is None are left out."""
    child = etree.SubElement(parent, tag)
    _fill(child, attrs, text)
    return child


def new(tag: str, attrs: Mapping[str, object] | None = None, text: object = None) -> Element:
    element = etree.Element(tag)
    _fill(element, attrs, text)
    return element


def _fill(element: Element, attrs: Mapping[str, object] | None, text: object) -> None:
    for key, value in (attrs or {}).items():
        if value is not None:
            element.set(key, str(value))
    if text is not None:
        element.text = str(text)


def yes_no(value: bool) -> str:
    return "yes" if value else "no"


def on_off(value: bool) -> str:
    return "on" if value else "off"
