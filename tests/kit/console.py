"""Run the ```console blocks of the documentation and compare their output (the docs' example convention).

A ```console block is a list of commands, each a line starting with `$ ` (continued by a trailing `\\`
or by a here-document) followed by the output it prints. All blocks of one page run in order in one
fresh directory holding a copy of `examples/` (and `tests/data`, the public cases, as a checkout has it),
with `instancetype-webhook` on PATH; `curl` talks to a server started the way `make serve` starts it (its
ports are rewritten to free ones). A block preceded by the line `<!-- illustrative -->` is not run. In
expected output a line `...` stands for any number of lines and `...` inside a line for any text; uids,
timestamps, temporary paths and certificate bytes are normalised on both sides.

    python -m tests.kit.console PAGE.md    prints every command of PAGE with the output it gives now
"""
from __future__ import annotations

import difflib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from markdown_it import MarkdownIt

from tests.kit.server import free_port, launch

ROOT = Path(__file__).resolve().parents[2]
ILLUSTRATIVE = "<!-- illustrative -->"
SERVE_URL, METRICS_URL = "127.0.0.1:8443", "127.0.0.1:8080"
# What a runnable command may call: this project's CLI, curl against `make serve`, plain shell helpers.
HELPERS = frozenset({
    "instancetype-webhook", "curl", "cat", "sed", "echo", "printf", "grep", "head", "tail", "cut", "sort",
    "uniq", "wc", "tr", "diff", "cp", "mkdir", "ls", "chmod", "python3", "base64", "true", "test",
})
SEPARATORS = frozenset({"|", "||", "&&", ";", "(", ")", "$(", "`"})
BACKGROUND = re.compile(r"(?<![>&|])&(?![&>])\s*(?:$|;|\n)")
HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")
NORMALISE = (
    (re.compile(r"-----BEGIN ([A-Z ]+)-----.*?-----END \1-----", re.S), r"<\1>"),
    (re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"), "<uid>"),
    (re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?"), "<time>"),
    (re.compile(r"/tmp/[^\s\"':,)]+"), "<tmp>"),
    (re.compile(r"(?:[0-9A-Fa-f]{2}:){15,}[0-9A-Fa-f]{2}"), "<hex>"),
    (re.compile(r"[A-Za-z0-9+/]{64,}={0,2}"), "<base64>"),
)


@dataclass
class Command:
    text: str
    expected: str
    line: int  # 1-based line of the `$ ` in the page


@dataclass
class Block:
    line: int
    illustrative: bool
    commands: list[Command] = field(default_factory=list)


def parse_commands(content: str, first_line: int) -> list[Command]:
    """The commands of one console block (`first_line`: the page line of the block's first line)."""
    commands: list[Command] = []
    lines = content.splitlines()
    i = 0
    while i < len(lines):
        if not lines[i].startswith("$ "):
            if commands:
                commands[-1].expected += lines[i] + "\n"
            i += 1
            continue
        start = i
        text = [lines[i][2:]]
        while text[-1].endswith("\\") and i + 1 < len(lines):
            i += 1
            text.append(lines[i])
        for match in HEREDOC.finditer("\n".join(text)):
            while i + 1 < len(lines):
                i += 1
                text.append(lines[i])
                if lines[i] == match[2]:
                    break
        commands.append(Command("\n".join(text), "", first_line + start))
        i += 1
    return commands


def blocks(page: Path) -> list[Block]:
    """The ```console blocks of a Markdown page, in order."""
    tokens = MarkdownIt("commonmark").parse(page.read_text())
    found = []
    for index, token in enumerate(tokens):
        if token.type != "fence" or token.info.strip() != "console" or token.map is None:
            continue
        before = tokens[index - 1] if index else None
        illustrative = before is not None and before.type == "html_block" and before.content.strip() == ILLUSTRATIVE
        found.append(Block(token.map[0] + 1, illustrative, parse_commands(token.content, token.map[0] + 2)))
    return found


def _shell_words(text: str) -> list[str]:
    body = HEREDOC.split(text)[0] if HEREDOC.search(text) else text
    lexer = shlex.shlex(body.replace("\\\n", " "), posix=True, punctuation_chars="|&;()")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    return list(lexer)


def not_runnable(command: Command) -> str | None:
    """Why `command` breaks the convention (None: it may run)."""
    try:
        words = _shell_words(command.text)
    except ValueError as exc:
        return f"cannot parse: {exc}"
    if BACKGROUND.search(HEREDOC.split(command.text)[0]):
        return "runs something in the background"
    segment_start = True
    for word in words:
        if word in SEPARATORS or word.endswith("$("):
            segment_start = True
            continue
        if word == "&":  # part of a redirection (2>&1)
            continue
        if segment_start and "=" not in word:
            if word not in HELPERS:
                return f"`{word}` is not this project's CLI, curl against `make serve` or a shell helper"
            segment_start = False
        if word.startswith(("http://", "https://")) and not re.match(
                rf"^https://{re.escape(SERVE_URL)}/|^http://{re.escape(METRICS_URL)}/", word):
            return f"`{word}` is not the `make serve` server (https://{SERVE_URL}, metrics http://{METRICS_URL})"
    return None


def normalise(text: str, tmp: Path | None = None) -> str:
    if tmp is not None:
        text = text.replace(str(tmp) + "/", "").replace(str(tmp), ".")
    for pattern, replacement in NORMALISE:
        text = pattern.sub(replacement, text)
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def matches(expected: str, actual: str) -> bool:
    """`actual` is `expected`, where a line `...` is any lines and `...` in a line any text."""
    parts = []
    for line in expected.splitlines():
        if line.strip() == "...":
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            parts.append(".*?".join(re.escape(piece) for piece in line.split("...")) + r"\n")
    return re.fullmatch("".join(parts), actual + "\n" if actual else "", re.S) is not None


def page_uses_server(page_blocks: list[Block]) -> bool:
    return any(SERVE_URL in c.text or METRICS_URL in c.text for b in page_blocks if not b.illustrative
               for c in b.commands)


def serve_command() -> list[str]:
    """The `make serve` recipe, read from the Makefile."""
    text = (ROOT / "Makefile").read_text()
    recipe = re.search(r"^serve:.*\n\t(.+)$", text, re.M)
    if recipe is None:
        raise RuntimeError("no `serve` target in the Makefile")
    return [word.replace("$(VENV)/bin/", "") for word in shlex.split(recipe[1])]


@dataclass
class Session:
    """One page's run: its directory, environment and (when a command needs it) the `make serve` server."""

    tmp: Path
    env: dict[str, str]
    rewrite: dict[str, str] = field(default_factory=dict)

    def run(self, command: Command, timeout: float = 180) -> str:
        text = command.text
        for old, new in self.rewrite.items():
            text = text.replace(old, new)
        proc = subprocess.run(["bash", "-c", text], cwd=self.tmp, env=self.env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, timeout=timeout, check=False)
        return proc.stdout.decode(errors="replace")


def _environment(tmp: Path) -> dict[str, str]:
    bin_dir = Path(sys.executable).parent
    env = {k: v for k, v in os.environ.items() if not k.startswith("INSTANCETYPE_WEBHOOK_")}
    env.update(PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", HOME=str(tmp), LC_ALL="C.UTF-8",
               COLUMNS="100", NO_COLOR="1", TERM="dumb")
    return env


@contextmanager
def session(page_blocks: list[Block], ready_timeout: float = 60) -> Iterator[Session]:
    with tempfile.TemporaryDirectory(prefix="docs-console-") as name:
        tmp = Path(name)
        shutil.copytree(ROOT / "examples", tmp / "examples")
        (tmp / "tests").mkdir()
        (tmp / "tests" / "data").symlink_to(ROOT / "tests" / "data")  # the public cases, as a checkout has them
        run = Session(tmp, _environment(tmp))
        if not page_uses_server(page_blocks):
            yield run
            return
        port, metrics = free_port(), free_port()
        argv = serve_command()
        argv[argv.index("--port") + 1] = str(port)
        argv += ["--metrics-port", str(metrics)]
        run.rewrite = {SERVE_URL: f"127.0.0.1:{port}", METRICS_URL: f"127.0.0.1:{metrics}"}

        def ready() -> bool:
            return httpx.get(f"https://127.0.0.1:{port}/readyz", verify=False, timeout=1).status_code == 200

        # exactly `make serve`'s command line and a clean environment, from the page's scratch directory
        with launch(tmp, [], ready, timeout=ready_timeout, name="make-serve", program=argv, cwd=tmp,
                    env=run.env, inherit_env=False):
            yield run


def check_page(page: Path) -> list[str]:
    """Run every block of `page`; the failures, each with the command and a diff (empty: all passed)."""
    page_blocks = blocks(page)
    failures = []
    rel = page.relative_to(ROOT) if page.is_relative_to(ROOT) else page
    for block in page_blocks:
        if block.illustrative:
            continue
        for command in block.commands:
            why = not_runnable(command)
            if why:
                failures.append(f"{rel}:{command.line}: {why}; mark the block {ILLUSTRATIVE} if it cannot run")
    if failures:
        return failures
    with session(page_blocks) as run:
        for block in page_blocks:
            for command in [] if block.illustrative else block.commands:
                actual = normalise(run.run(command), run.tmp)
                expected = normalise(command.expected)
                if not matches(expected, actual):
                    diff = "\n".join(difflib.unified_diff(expected.splitlines(), actual.splitlines(),
                                                          "documented", "actual", lineterm=""))
                    failures.append(f"{rel}:{command.line}: $ {command.text}\n{diff}")
    return failures


def main(argv: list[str]) -> int:
    for name in argv:
        page = Path(name).resolve()
        page_blocks = blocks(page)
        with session(page_blocks) as run:
            for block in page_blocks:
                print(f"--- {name}:{block.line}" + (" (illustrative, not run)" if block.illustrative else ""))
                for command in block.commands:
                    print(f"$ {command.text}")
                    if not block.illustrative:
                        print(normalise(run.run(command), run.tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
