"""instancetype_webhook/playground/yamlpos.py: the editor's text parsed with the line and column of every field."""
from __future__ import annotations

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from instancetype_webhook.playground.yamlpos import MAX_DEPTH, Position, YAMLProblem, dump, locate, parse, split_field

VM = """\
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: web
  annotations:
    vm.kubevirt.io/os: linux
spec:
  template:
    spec:
      domain:
        cpu:
          sockets: 4
      volumes:
      - name: rootdisk
        containerDisk: {image: fedora}
"""


def test_positions_point_at_the_key_of_each_field():
    parsed = parse(VM)
    assert parsed.value["spec"]["template"]["spec"]["domain"]["cpu"]["sockets"] == 4
    assert parsed.positions[("spec", "template", "spec", "domain", "cpu", "sockets")] == Position(12, 11)
    assert parsed.positions[("spec", "template", "spec", "volumes", 0)] == Position(14, 9)
    assert parsed.positions[("spec", "template", "spec", "volumes", 0, "containerDisk", "image")] == Position(15, 25)


@pytest.mark.parametrize(("field", "line", "exact"), [
    ("spec.template.spec.domain.cpu.sockets", 12, True),
    ("spec.template.spec.volumes[0].containerDisk", 15, True),
    ("/spec/template/spec/volumes/0/name", 14, True),
    ("metadata.annotations.vm.kubevirt.io/os", 6, True),  # a key with dots
    ("spec.template.spec.domain.memory.guest", 10, False),  # not written: the nearest written ancestor
    ("spec.template.spec.volumes[3].name", 13, False),
])
def test_locate_finds_the_line_of_a_cause_field(field, line, exact):
    position, found = locate(parse(VM).positions, field)
    assert (position.line, found) == (line, exact)


def test_locate_under_a_prefix_and_when_the_prefix_is_missing():
    review = "kind: AdmissionReview\nrequest:\n  object:\n    spec:\n      running: true\n"
    positions = parse(review).positions
    assert locate(positions, "spec.running", ("request", "object"))[0] == Position(5, 7)
    assert locate(positions, "spec.running", ("nothing",)) == (None, False)


def test_split_field():
    assert split_field("a.b[2].c") == ["a", "b", 2, "c"]
    assert split_field("/a/b~1c/0") == ["a", "b/c", 0]


@pytest.mark.parametrize(("text", "line", "column", "words"), [
    ("spec:\n  a: [1, 2\n", 3, 1, "expected ',' or ']'"),
    ("spec:\n\tbad: tab\n", 2, 1, "cannot start any token"),
    ("a: 1\n---\nb: 2\n", 3, 1, "more than one YAML document"),
    ("spec:\n  7: seven\n", 2, 3, "not a string"),
])
def test_bad_yaml_is_answered_with_line_and_column(text, line, column, words):
    with pytest.raises(YAMLProblem) as caught:
        parse(text)
    assert (caught.value.line, caught.value.column) == (line, column)
    assert words in caught.value.message
    assert str(caught.value).startswith(f"line {line}, column {column}: ")


@pytest.mark.parametrize("text", ["", "# only a comment\n", "---\n"])
def test_empty_text(text):
    with pytest.raises(YAMLProblem, match="paste a VirtualMachine|no object"):
        parse(text)


def test_alias_bombs_and_deep_nesting_are_refused_not_expanded():
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n" for i in range(8))
    with pytest.raises(YAMLProblem, match="more than 200000 nodes"):
        parse(bomb)
    with pytest.raises(YAMLProblem, match=f"deeper than {MAX_DEPTH}"):
        parse("[" * 300 + "]" * 300)


def test_timestamps_stay_strings_and_merge_keys_merge():
    parsed = parse("created: 2024-01-02\nbase: &b {cpu: 2}\nvm:\n  <<: *b\n  memory: 1Gi\n")
    assert parsed.value["created"] == "2024-01-02"
    assert parsed.value["vm"] == {"cpu": 2, "memory": "1Gi"}
    assert ("vm", "cpu") in parsed.positions


def test_dump_writes_multiline_strings_as_blocks():
    text = dump({"userData": "#cloud-config\nuser: fedora\n", "name": "a"})
    assert "userData: |\n  #cloud-config\n  user: fedora\n" in text


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=30)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(min_size=1, max_size=8), json_values, min_size=1, max_size=5))
def test_dump_then_parse_gives_the_same_object_and_a_position_for_every_path(value):
    parsed = parse(dump(value))
    assert parsed.value == value
    assert parsed.value == yaml.safe_load(dump(value))

    def paths(node, path=()):
        yield path
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, child in items:
            yield from paths(child, (*path, key))

    assert set(paths(value)) <= set(parsed.positions)


@pytest.mark.parametrize(("text", "line", "words"), [
    ("spec:\n  data: !!binary aGVsbG8=\n", 2, "bytes is not JSON data"),
    ("spec:\n  names: !!set {a, b}\n", 2, "set is not JSON data"),
    ("spec:\n  ratio: .nan\n", 2, "nan is not a JSON number"),
    ("spec:\n  big: 99999999999999999999999\n", 2, "larger than 64 bits"),
])
def test_values_json_cannot_carry_are_refused_at_their_line(text, line, words):
    with pytest.raises(YAMLProblem, match=words) as caught:
        parse(text)
    assert caught.value.line == line
