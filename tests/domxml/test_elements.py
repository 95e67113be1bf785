"""The lxml helper of every builder (domxml/elements.py): attributes in the given order, None left out."""
from __future__ import annotations

from lxml import etree

from instancetype_webhook.domxml.elements import new, on_off, sub, yes_no


def test_sub_appends_to_the_parent_with_attributes_in_order():
    parent = etree.Element("devices")
    child = sub(parent, "vcpu", {"placement": "static", "cpuset": None, "current": 2}, 8)
    assert list(parent) == [child]
    assert etree.tostring(parent, encoding="unicode") == (
        '<devices><vcpu placement="static" current="2">8</vcpu></devices>')
    second = sub(parent, "b", {"z": "1", "a": "2"})
    assert list(second.attrib) == ["z", "a"]  # insertion order, not sorted
    assert list(parent) == [child, second]


def test_new_makes_a_free_element():
    element = new("memory", {"unit": "b"}, 1024)
    assert element.getparent() is None
    assert etree.tostring(element, encoding="unicode") == '<memory unit="b">1024</memory>'


def test_text_none_is_no_text_but_falsy_values_are_written():
    assert new("readonly").text is None and dict(new("readonly").attrib) == {}
    assert new("offset", text=0).text == "0"
    assert new("x", {"n": 0, "s": "", "f": False}).attrib == {"n": "0", "s": "", "f": "False"}
    assert new("x", {"gone": None}).attrib == {}


def test_yes_no_and_on_off():
    assert (yes_no(True), yes_no(False)) == ("yes", "no")
    assert (on_off(True), on_off(False)) == ("on", "off")
