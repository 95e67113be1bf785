"""Two texts side by side: rows pairing their lines, each marked same, changed, removed or added.

The lines are aligned by a patience diff: the lines that occur once in each text anchor the alignment
(their longest increasing run), the stretches between anchors are aligned the same way, and a small
stretch without such lines goes to difflib. A VM's YAML has many repeated lines (`- name:`, `disk:`)
and many unique ones (names, images), so this stays near-linear where difflib alone is quadratic
(300 volumes that each gain a disk and a pull policy: 0.013 s, difflib 2.5 s; 3,000 volumes: 0.06 s).
"""
from __future__ import annotations

import bisect
import difflib
from collections import Counter
from typing import Literal, TypedDict

Change = Literal["same", "changed", "removed", "added"]
SMALL = 40_000  # a stretch of at most this many line pairs without anchors goes to difflib
MAX_DEPTH = 64


class Row(TypedDict):
    left: int | None  # 1-based line of the left text, None when the row has no left line
    right: int | None
    change: Change


def _anchors(a: list[str], b: list[str], alo: int, ahi: int, blo: int, bhi: int) -> list[tuple[int, int]]:
    """The longest run of lines unique in both stretches that keeps its order in both."""
    ca, cb = Counter(a[alo:ahi]), Counter(b[blo:bhi])
    where = {line: j for j, line in enumerate(b[blo:bhi], blo) if cb[line] == 1 and ca[line] == 1}
    pairs = [(i, where[line]) for i, line in enumerate(a[alo:ahi], alo) if line in where]
    # longest increasing subsequence of the b indices (patience sorting)
    tops: list[int] = []
    top_at: list[int] = []
    back: list[int] = [-1] * len(pairs)
    for k, (_, j) in enumerate(pairs):
        pile = bisect.bisect_left(tops, j)
        back[k] = top_at[pile - 1] if pile else -1
        if pile == len(tops):
            tops.append(j)
            top_at.append(k)
        else:
            tops[pile], top_at[pile] = j, k
    run: list[tuple[int, int]] = []
    k = top_at[-1] if top_at else -1
    while k >= 0:
        run.append(pairs[k])
        k = back[k]
    return run[::-1]


def _match(a: list[str], b: list[str], alo: int, ahi: int, blo: int, bhi: int, depth: int,
           out: list[tuple[int, int]]) -> None:
    """Append the matched (left, right) line pairs of the two stretches to `out`, in order."""
    while alo < ahi and blo < bhi and a[alo] == b[blo]:
        out.append((alo, blo))
        alo, blo = alo + 1, blo + 1
    tail: list[tuple[int, int]] = []
    while alo < ahi and blo < bhi and a[ahi - 1] == b[bhi - 1]:
        ahi, bhi = ahi - 1, bhi - 1
        tail.append((ahi, bhi))
    if alo < ahi and blo < bhi:
        anchors = _anchors(a, b, alo, ahi, blo, bhi) if depth < MAX_DEPTH else []
        if anchors:
            i0, j0 = alo, blo
            for i, j in anchors:
                _match(a, b, i0, i, j0, j, depth + 1, out)
                out.append((i, j))
                i0, j0 = i + 1, j + 1
            _match(a, b, i0, ahi, j0, bhi, depth + 1, out)
        elif (ahi - alo) * (bhi - blo) <= SMALL:
            blocks = difflib.SequenceMatcher(None, a[alo:ahi], b[blo:bhi], autojunk=False).get_matching_blocks()
            out.extend((alo + m.a + k, blo + m.b + k) for m in blocks for k in range(m.size))
    out.extend(reversed(tail))


def _gap(i0: int, i1: int, j0: int, j1: int, out: list[Row]) -> None:
    """Rows for the unmatched lines left[i0:i1] and right[j0:j1] (0-based): changed pairs, then the rest."""
    paired = min(i1 - i0, j1 - j0)
    out.extend(Row(left=i0 + k + 1, right=j0 + k + 1, change="changed") for k in range(paired))
    out.extend(Row(left=i + 1, right=None, change="removed") for i in range(i0 + paired, i1))
    out.extend(Row(left=None, right=j + 1, change="added") for j in range(j0 + paired, j1))


def rows(left: list[str], right: list[str]) -> list[Row]:
    """Every line of both texts once, in order, aligned on the lines they share."""
    matched: list[tuple[int, int]] = []
    _match(left, right, 0, len(left), 0, len(right), 0, matched)
    out: list[Row] = []
    i0 = j0 = 0
    for i, j in matched:
        _gap(i0, i, j0, j, out)
        out.append(Row(left=i + 1, right=j + 1, change="same"))
        i0, j0 = i + 1, j + 1
    _gap(i0, len(left), j0, len(right), out)
    return out


def changed_lines(diff: list[Row]) -> tuple[int, int]:
    """(lines of the left text that differ, lines of the right text that differ)."""
    left = sum(1 for r in diff if r["left"] is not None and r["change"] != "same")
    right = sum(1 for r in diff if r["right"] is not None and r["change"] != "same")
    return left, right
