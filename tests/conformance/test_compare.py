"""Comparing our answers with upstream's (conformance/compare.py): maps by key, lists in order, quantities by
value, the first difference with its path, cause lists by their fields first."""
from instancetype_webhook.conformance import compare
from instancetype_webhook.conformance.compare import MISSING, Difference


def test_list_order_is_significant():
    assert compare.first_difference([1, 2], [2, 1]) == compare.Difference("[0]", 1, 2)
    assert compare.first_difference({"a": 1, "b": 2}, {"b": 2, "a": 1}) is None
    assert compare.first_difference("4Gi", "4294967296") is None
    assert compare.first_difference("1", "one") is not None


def test_the_first_difference_has_the_path_to_it():
    ours = {"spec": {"domain": {"cpu": {"sockets": 2}, "devices": [{"name": "a"}, {"name": "b"}]}}}
    theirs = {"spec": {"domain": {"cpu": {"sockets": 2}, "devices": [{"name": "a"}, {"name": "c"}]}}}
    assert compare.first_difference(ours, theirs, "vm") == Difference("vm.spec.domain.devices[1].name", "b", "c")
    assert compare.first_difference(ours, ours) is None


def test_a_member_absent_on_one_side_is_a_difference():
    assert compare.first_difference({"a": 1}, {"a": 1, "b": 2}) == Difference("b", MISSING, 2)
    assert compare.first_difference([1, 2], [1]) == Difference("[1]", 2, MISSING)
    assert compare.first_difference({"a": None}, {}) == Difference("a", None, MISSING)


def test_values_of_different_types():
    assert compare.first_difference(1, 1.0) is None  # numbers by value
    assert compare.first_difference(2, 2.5) == Difference("", 2, 2.5)
    assert compare.first_difference(True, 1) == Difference("", True, 1)  # a bool is not a number
    assert compare.first_difference({"a": 1}, [1]) == Difference("", {"a": 1}, [1])
    assert compare.first_difference("2", 2) is None  # a quantity and its number
    assert compare.first_difference("1Gi", 1000000000) == Difference("", "1Gi", 1000000000)


def test_same_quantity():
    assert compare.same_quantity("4Gi", "4096Mi")
    assert compare.same_quantity("1", 1) and compare.same_quantity(1, "1")
    assert compare.same_quantity("500m", "0.5")
    assert not compare.same_quantity("1Gi", "1G")
    assert not compare.same_quantity(1, 1)  # two numbers are compared as numbers, not here
    assert not compare.same_quantity(True, "1")
    assert not compare.same_quantity("one", "1")
    assert not compare.same_quantity("1", ["1"])


def test_a_difference_prints_got_and_want_or_its_note():
    assert str(Difference("a.b", 2, 7)) == "a.b: got 2, want 7"
    assert str(Difference("a", MISSING, {"y": 1, "x": 2})) == 'a: got <absent>, want {"x": 2, "y": 1}'
    assert str(Difference("xml", "ours", "theirs", note="the XML differs")) == "xml: the XML differs"
    long = str(Difference("p", "x" * 500, 1))
    assert long.startswith('p: got "xxx') and '...' in long and long.endswith(", want 1")
    assert len(long.split(", want")[0]) == len("p: got ") + 160


def test_causes_by_the_set_of_fields_first_then_in_order():
    a = {"type": "FieldValueInvalid", "field": "spec.a", "message": "a"}
    b = {"type": "FieldValueInvalid", "field": "spec.b", "message": "b"}
    assert compare.compare_causes([a, b], [a, b], "causes") is None
    assert compare.compare_causes([a], [a, b], "causes") == Difference("causes[*].field", ["spec.a"],
                                                                        ["spec.a", "spec.b"])
    # the same fields in another order: then the causes are compared in order
    assert compare.compare_causes([b, a], [a, b], "causes") == Difference("causes[0].field", "spec.b", "spec.a")
    other = {**b, "message": "another text"}
    assert compare.compare_causes([a, other], [a, b], "causes") == Difference("causes[1].message", "another text",
                                                                              "b")
    assert compare.compare_causes([{"message": "no field"}], [], "c") == Difference("c[*].field", [""], [])
