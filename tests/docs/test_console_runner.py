"""The console-block runner itself: parsing, the convention's checks, normalising and matching."""
from __future__ import annotations

from pathlib import Path

from tests.kit.console import (
    Command,
    blocks,
    check_page,
    matches,
    normalise,
    not_runnable,
    parse_commands,
    serve_command,
)

PAGE = """# A page

```console
$ echo one \\
    two
one two
$ cat > vm.yaml <<'END'
a: 1
END
$ cat vm.yaml
a: 1
```

<!-- illustrative -->
```console
$ kubectl get vm
NAME AGE
```

```sh
$ not a console block
```
"""


def test_blocks_commands_continuations_and_heredocs(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(PAGE)
    found = blocks(page)
    assert [(b.line, b.illustrative) for b in found] == [(3, False), (15, True)]
    first = found[0].commands
    assert [c.text for c in first] == ["echo one \\\n    two", "cat > vm.yaml <<'END'\na: 1\nEND", "cat vm.yaml"]
    assert [c.expected for c in first] == ["one two\n", "", "a: 1\n"]
    assert [c.line for c in first] == [4, 7, 10]


def test_a_page_runs_in_order_in_one_directory_and_mismatches_fail(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(PAGE)
    assert check_page(page) == []
    page.write_text(PAGE.replace("a: 1\n```", "a: 2\n```"))
    [failure] = check_page(page)
    assert "page.md:10: $ cat vm.yaml" in failure and "-a: 2" in failure and "+a: 1" in failure


def test_the_examples_folder_is_there(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("```console\n$ ls examples/infer\nvm.yaml\nvolumes.yaml\n```\n")
    assert check_page(page) == []


def test_commands_outside_the_convention_are_refused() -> None:
    def why(text: str) -> str | None:
        return not_runnable(Command(text, "", 1))

    assert why('instancetype-webhook expand -f examples/vm.json | head -3; echo "exit $?"') is None
    assert why("curl -sk https://127.0.0.1:8443/readyz") is None
    assert why("curl -s http://127.0.0.1:8080/metrics 2>&1 | grep requests") is None
    assert "kubectl" in (why("kubectl apply -f vm.yaml") or "")
    assert "example.com" in (why("curl -s https://example.com/") or "")
    assert "background" in (why("instancetype-webhook serve --dev &") or "")
    assert "rm" in (why("echo x && rm -rf /") or "")


def test_an_unrunnable_block_fails_unless_marked_illustrative(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("```console\n$ kubectl get vm\n```\n")
    [failure] = check_page(page)
    assert "page.md:2" in failure and "<!-- illustrative -->" in failure
    page.write_text("<!-- illustrative -->\n```console\n$ kubectl get vm\n```\n")
    assert check_page(page) == []


def test_normalise_and_ellipsis() -> None:
    text = ("uid 7d1a3b52-0000-4000-8000-000000000003 at 2026-12-04T02:45:01.123Z in /tmp/pytest-1/x.yaml\n"
            "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
    assert normalise(text) == "uid <uid> at <time> in <tmp>\n<CERTIFICATE>"
    assert matches("a\n...\nd", "a\nb\nc\nd")
    assert matches("a\n...\nb", "a\nb")
    assert matches('{"set":{...}}', '{"set":{"x": 1}}')
    assert not matches("a\nb", "a\nc")
    assert not matches("a", "a\nextra")


def test_the_server_is_started_as_make_serve_starts_it() -> None:
    argv = serve_command()
    assert argv[:2] == ["instancetype-webhook", "serve"] and argv[argv.index("--port") + 1] == "8443"


def test_parse_commands_keeps_blank_lines_of_the_output() -> None:
    [c1, c2] = parse_commands("$ a\nx\n\ny\n$ b\n", 10)
    assert (c1.expected, c1.line, c2.line) == ("x\n\ny\n", 10, 14)
