"""admission.whatif: two answers in, only what differs out."""
from __future__ import annotations

from instancetype_webhook.admission.whatif import ABSENT, Answer, leaf_paths, what_if


def test_flatten_names_every_leaf_by_its_path() -> None:
    assert leaf_paths({"spec": {"a": [{"b": 1}, 2], "empty": {}, "none": []}}) == {
        "spec.a[0].b": 1, "spec.a[1]": 2, "spec.empty": {}, "spec.none": []}


def test_the_same_answer_has_no_differences() -> None:
    answer = Answer("v1.8.4", "allowed", ("warning: w",), {"a": 1}, ("<domain>", "</domain>"))
    compared = what_if(answer, Answer("v1.9.0", *[answer.verdict, answer.causes, answer.fields, answer.lines]))
    assert compared.same and compared.count == 0
    assert compared.render() == "what-if: v1.8.4 -> v1.9.0: no differences\n"
    assert compared.to_dict()["same"] is True


def test_only_what_differs_is_kept() -> None:
    first = Answer("v1.8.4", "allowed", ("kept", "gone"), {"same": 1, "changed": "a", "only.first": True},
                   ("<domain>", "  <loader>/usr/share/OVMF</loader>", "</domain>"))
    second = Answer("v1.9.0", "rejected (422): no", ("kept", "added"), {"same": 1, "changed": "b", "new": [1]},
                    ("<domain>", "  <loader>/usr/share/edk2/ovmf</loader>", "</domain>"))
    compared = what_if(first, second)
    assert compared.verdict == ("allowed", "rejected (422): no")
    assert (compared.causes_gone, compared.causes_added) == (["gone"], ["added"])
    assert compared.fields == [("changed", "a", "b"), ("new", ABSENT, [1]), ("only.first", True, ABSENT)]
    assert compared.lines == ["@@ -2 +2 @@", "-  <loader>/usr/share/OVMF</loader>",
                              "+  <loader>/usr/share/edk2/ovmf</loader>"]
    assert compared.count == 1 + 2 + 3 + 2
    text = compared.render()
    assert text.startswith("what-if: v1.8.4 -> v1.9.0: 8 differences\nverdict:\n  v1.8.4: allowed\n")
    assert "  - gone\n  + added\n" in text and "  new: (absent) -> [1]\n" in text and "same" not in text
    doc = compared.to_dict()
    assert doc["verdict"] == {"first": "allowed", "second": "rejected (422): no"}
    assert doc["fields"][0] == {"path": "changed", "first": "a", "second": "b"}


def test_changed_lines_are_the_diffs_lines_without_its_hunk_headers() -> None:
    first = Answer("v1.8.4", "allowed", lines=("<domain>", "  <a/>", "  <b/>", "</domain>"))
    second = Answer("main", "allowed", lines=("<domain>", "  <a/>", "  <c/>", "  <d/>", "</domain>"))
    compared = what_if(first, second)
    assert compared.lines[0].startswith("@@")
    assert compared.changed_lines == ["-  <b/>", "+  <c/>", "+  <d/>"]
    assert compared.count == 3
    assert what_if(first, Answer("main", "allowed", lines=first.lines)).changed_lines == []
