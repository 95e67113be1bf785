"""instancetype_webhook/playground/sidebyside.py: both texts' lines, once each and in order, aligned."""
from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from instancetype_webhook.playground.sidebyside import changed_lines, rows


def test_rows_mark_what_changed():
    left = ["a", "b", "c", "d"]
    right = ["a", "B", "c", "e", "f"]
    assert rows(left, right) == [
        {"left": 1, "right": 1, "change": "same"},
        {"left": 2, "right": 2, "change": "changed"},
        {"left": 3, "right": 3, "change": "same"},
        {"left": 4, "right": 4, "change": "changed"},
        {"left": None, "right": 5, "change": "added"},
    ]
    assert changed_lines(rows(left, right)) == (2, 3)
    assert rows(["x"], []) == [{"left": 1, "right": None, "change": "removed"}]


@given(st.lists(st.sampled_from("abcde"), max_size=30), st.lists(st.sampled_from("abcde"), max_size=30))
def test_every_line_appears_once_in_order_and_same_rows_are_equal(left, right):
    diff = rows(left, right)
    assert [r["left"] for r in diff if r["left"] is not None] == list(range(1, len(left) + 1))
    assert [r["right"] for r in diff if r["right"] is not None] == list(range(1, len(right) + 1))
    for r in diff:
        if r["change"] == "same":
            assert left[r["left"] - 1] == right[r["right"] - 1]
    assert (changed_lines(diff) == (0, 0)) == (left == right)


def test_repeated_lines_do_not_spoil_the_alignment_of_a_long_text():
    """Many volumes, each given one more line: every original line stays paired with itself."""
    left = [line for i in range(3000) for line in (f"- name: v{i}", "  containerDisk:", f"    image: img:{i}")]
    right = [line for i in range(3000)
             for line in (f"- name: v{i}", "  containerDisk:", f"    image: img:{i}", "    imagePullPolicy: Always")]
    diff = rows(left, right)
    assert changed_lines(diff) == (0, 3000)
    assert {right[r["right"] - 1] for r in diff if r["change"] == "added"} == {"    imagePullPolicy: Always"}


@given(st.lists(st.text(alphabet="ab", max_size=2), max_size=60), st.lists(st.text(alphabet="ab", max_size=2),
                                                                           max_size=60))
def test_long_repetitive_texts_keep_every_line_once(left, right):
    diff = rows(left, right)
    assert [r["left"] for r in diff if r["left"] is not None] == list(range(1, len(left) + 1))
    assert [r["right"] for r in diff if r["right"] is not None] == list(range(1, len(right) + 1))
    assert all(left[r["left"] - 1] == right[r["right"] - 1] for r in diff if r["change"] == "same")
