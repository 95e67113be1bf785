"""A YAML or JSON syntax error names the file, line and column (FILE:LINE:COL)."""
from __future__ import annotations

import pytest

from instancetype_webhook.cli.syntax import syntax_message
from tests.kit.cli import run_main


@pytest.mark.parametrize(("text", "where", "what"), [
    ("a: {b: [1,\n", "2:1", "while parsing a flow node: did not find expected node content"),
    ("kind: VirtualMachine\nmetadata:\n  name: a\n  labels: x: y\n", "4:12", "mapping values are not allowed"),
    ('{"kind": "VirtualMachine",\n "spec": {"a": 1\n', "3:1", "expected ',' or '}'"),
    ("apiVersion: v1\nkind: A\n---\nkind: B\n  bad: indent\n", "5:6", "mapping values are not allowed"),
])
def test_the_error_names_file_line_and_column(tmp_path, text, where, what):
    path = tmp_path / "vm.yaml"
    path.write_text(text)
    code, out, err = run_main("expand", "-f", str(path))
    assert code == 2 and out == ""
    assert err.startswith(f"error: {path}:{where}: not valid YAML or JSON: ")
    assert what in err and len(err.splitlines()) == 1


def test_stdin_is_named_as_such():
    code, _, err = run_main("validate", "-f", "-", stdin="a: [\n")
    assert code == 2 and err.startswith("error: <stdin>:2:1: not valid YAML or JSON:")


def test_an_error_not_caused_by_the_parser_keeps_its_message():
    assert syntax_message(ValueError("x"), "f") is None
