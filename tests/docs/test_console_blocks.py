"""Every runnable ```console block of README.md and docs/**/*.md, run and compared (tests/kit/console.py)."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.kit.console import ROOT, blocks, check_page


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def pages_with_examples() -> list[Path]:
    return [page for page in pages() if any(not b.illustrative for b in blocks(page))]


def test_the_docs_have_runnable_examples() -> None:
    runnable = [c for page in pages() for b in blocks(page) if not b.illustrative for c in b.commands]
    illustrative = [b for page in pages() for b in blocks(page) if b.illustrative]
    assert len(runnable) >= 30, "the console-block parser found too few commands"
    assert len(illustrative) * 3 < len(runnable), "illustrative blocks must stay the exception"


@pytest.mark.parametrize("page", pages_with_examples(), ids=lambda p: str(p.relative_to(ROOT)))
def test_console_blocks(page: Path) -> None:
    failures = check_page(page)
    assert not failures, "\n\n".join(failures)
