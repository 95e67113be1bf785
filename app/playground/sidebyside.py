"""Two texts side by side: rows pairing their lines, each marked same, changed, removed or added."""
from __future__ import annotations

import difflib
from typing import Literal, TypedDict

Change = Literal["same", "changed", "removed", "added"]


class Row(TypedDict):
    left: int | None  # 1-based line of the left text, None when the row has no left line
    right: int | None
    change: Change


def rows(left: list[str], right: list[str]) -> list[Row]:
    """Every line of both texts once, in order, aligned on their longest common runs."""
    out: list[Row] = []
    matcher = difflib.SequenceMatcher(None, left, right, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            pairs = zip(range(i1, i2), range(j1, j2), strict=True)
            out.extend(Row(left=i + 1, right=j + 1, change="same") for i, j in pairs)
            continue
        paired = min(i2 - i1, j2 - j1) if tag == "replace" else 0
        out.extend(Row(left=i1 + k + 1, right=j1 + k + 1, change="changed") for k in range(paired))
        out.extend(Row(left=i + 1, right=None, change="removed") for i in range(i1 + paired, i2))
        out.extend(Row(left=None, right=j + 1, change="added") for j in range(j1 + paired, j2))
    return out


def changed_lines(diff: list[Row]) -> tuple[int, int]:
    """(lines of the left text that differ, lines of the right text that differ)."""
    left = sum(1 for r in diff if r["left"] is not None and r["change"] != "same")
    right = sum(1 for r in diff if r["right"] is not None and r["change"] != "same")
    return left, right
