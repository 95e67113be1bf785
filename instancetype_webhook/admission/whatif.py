"""What-if for one VM: the same VM answered as two KubeVirt releases, and only what differs.

An `Answer` is what one release said, reduced to what a user compares: the verdict (one line), the causes,
messages and warnings (one line each), the fields of an object (the flat VM, a plan's rows; dotted paths) and
the lines of a text (the domain XML). `what_if(first, second)` keeps what differs: another verdict, causes
one release gives and the other not, fields with another value (or only on one side), and the text's changed
lines as a unified diff without context. Pure data: the CLI (`--compare-kubevirt-version`), the playground and
audit's upgrade preview (`fleet.preview`) build the answers, this says what differs.
"""
from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = ["Answer", "WhatIf", "leaf_paths", "what_if"]

ABSENT: Final = "(absent)"


@dataclass(frozen=True)
class Answer:
    """What one release answered for the VM."""

    release: str
    verdict: str
    causes: tuple[str, ...] = ()
    fields: Mapping[str, Any] = field(default_factory=dict)
    lines: tuple[str, ...] = ()


@dataclass
class WhatIf:
    """What `second` answers otherwise than `first` (everything empty: no differences)."""

    first: str
    second: str
    verdict: tuple[str, str] | None = None
    causes_gone: list[str] = field(default_factory=list)
    causes_added: list[str] = field(default_factory=list)
    fields: list[tuple[str, Any, Any]] = field(default_factory=list)  # (path, first's, second's); ABSENT: none
    lines: list[str] = field(default_factory=list)  # the unified diff (no context) of the texts

    @property
    def same(self) -> bool:
        return not (self.verdict or self.causes_gone or self.causes_added or self.fields or self.lines)

    @property
    def changed_lines(self) -> list[str]:
        """The text's lines that differ (`-` first's, `+` second's), without the diff's `@@` hunk headers."""
        return [line for line in self.lines if line[:1] in "+-"]

    @property
    def count(self) -> int:
        """How many differences: the verdict, each cause, each field, each changed text line."""
        return (self.verdict is not None) + len(self.causes_gone) + len(self.causes_added) + len(self.fields) \
            + len(self.changed_lines)

    def to_dict(self) -> dict[str, Any]:
        """`first`/`second` name the releases; each difference gives the `first` and `second` answers."""
        return {
            "first": self.first, "second": self.second, "same": self.same, "differences": self.count,
            "verdict": None if self.verdict is None else {"first": self.verdict[0], "second": self.verdict[1]},
            "causes": {"first": self.causes_gone, "second": self.causes_added},
            "fields": [{"path": path, "first": a, "second": b} for path, a, b in self.fields],
            "lines": self.lines,
        }

    def render(self) -> str:
        """The text form: a heading, then one block per kind of difference (or `no differences`)."""
        head = f"what-if: {self.first} -> {self.second}: "
        if self.same:
            return head + "no differences\n"
        out = [head + f"{self.count} difference{'s' if self.count != 1 else ''}"]
        if self.verdict is not None:
            out += ["verdict:", f"  {self.first}: {self.verdict[0]}", f"  {self.second}: {self.verdict[1]}"]
        if self.causes_gone or self.causes_added:
            out.append("causes, messages and warnings:")
            out += [f"  - {cause}" for cause in self.causes_gone] + [f"  + {cause}" for cause in self.causes_added]
        if self.fields:
            out.append(f"fields ({self.first} -> {self.second}):")
            out += [f"  {path}: {_show(a)} -> {_show(b)}" for path, a, b in self.fields]
        if self.lines:
            out.append(f"lines (- {self.first}, + {self.second}):")
            out += [f"  {line}" for line in self.lines]
        return "\n".join(out) + "\n"


def _show(value: Any) -> str:
    if isinstance(value, str):  # ABSENT too
        return value
    return json.dumps(value, sort_keys=True)


def leaf_paths(value: Any, prefix: str = "") -> dict[str, Any]:
    """The leaves of a JSON value by dotted path (`spec.template.spec.volumes[0].name`); an empty map or list
    is a leaf."""
    if isinstance(value, Mapping) and value:
        out: dict[str, Any] = {}
        for key, item in value.items():
            out.update(leaf_paths(item, f"{prefix}.{key}" if prefix else str(key)))
        return out
    if isinstance(value, list) and value:
        out = {}
        for index, item in enumerate(value):
            out.update(leaf_paths(item, f"{prefix}[{index}]"))
        return out
    return {prefix: value}


def what_if(first: Answer, second: Answer) -> WhatIf:
    """What `second` answers otherwise than `first`."""
    result = WhatIf(first.release, second.release)
    if first.verdict != second.verdict:
        result.verdict = (first.verdict, second.verdict)
    result.causes_gone = [cause for cause in first.causes if cause not in second.causes]
    result.causes_added = [cause for cause in second.causes if cause not in first.causes]
    for path in sorted(set(first.fields) | set(second.fields)):
        a, b = first.fields.get(path, ABSENT), second.fields.get(path, ABSENT)
        if a != b:
            result.fields.append((path, a, b))
    if first.lines != second.lines:
        result.lines = [line for line in difflib.unified_diff(list(first.lines), list(second.lines), lineterm="",
                                                              n=0) if not line.startswith(("+++", "---"))]
    return result
