"""Comparing our answers with upstream's: JSON semantically (map key order ignored, list order significant),
quantities by value, causes by their set of fields first."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from instancetype_webhook.kubevirt.quantity import QuantityError, parse

MISSING = object()  # a member absent on one side


class NotChecked(Exception):
    """A member that cannot be checked (yet); the reason is shown, the case does not fail for it."""


@dataclass(frozen=True)
class Difference:
    """The first place where our answer and upstream's differ."""

    path: str
    ours: Any
    expected: Any
    note: str | None = None  # replaces "got ..., want ..." when the values are not worth printing

    def __str__(self) -> str:
        if self.note is not None:
            return f"{self.path}: {self.note}"
        return f"{self.path}: got {_short(self.ours)}, want {_short(self.expected)}"


def _short(value: Any, limit: int = 160) -> str:
    if value is MISSING:
        return "<absent>"
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _child(path: str, key: Any) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else str(key)


def same_quantity(ours: Any, expected: Any) -> bool:
    """Whether two scalars are the same Kubernetes quantity written differently (4Gi vs 4294967296)."""
    if isinstance(ours, bool) or isinstance(expected, bool):
        return False
    if not (isinstance(ours, str) or isinstance(expected, str)):
        return False
    if not all(isinstance(v, (str, int, float)) for v in (ours, expected)):
        return False
    try:
        return parse(ours).value == parse(expected).value
    except QuantityError:
        return False


def first_difference(ours: Any, expected: Any, path: str = "") -> Difference | None:
    """The first difference between two JSON values: maps by key, lists in order, quantities by value."""
    if isinstance(ours, dict) and isinstance(expected, dict):
        for key in sorted(set(ours) | set(expected), key=str):
            diff = first_difference(ours.get(key, MISSING), expected.get(key, MISSING), _child(path, key))
            if diff is not None:
                return diff
        return None
    if isinstance(ours, list) and isinstance(expected, list):
        for index in range(max(len(ours), len(expected))):
            mine = ours[index] if index < len(ours) else MISSING
            theirs = expected[index] if index < len(expected) else MISSING
            diff = first_difference(mine, theirs, _child(path, index))
            if diff is not None:
                return diff
        return None
    if ours is MISSING or expected is MISSING:
        return Difference(path, ours, expected)
    if type(ours) is not type(expected) and not (_is_number(ours) and _is_number(expected)):
        return None if same_quantity(ours, expected) else Difference(path, ours, expected)
    if ours == expected or same_quantity(ours, expected):
        return None
    return Difference(path, ours, expected)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def compare_causes(ours: list[dict[str, Any]], expected: list[dict[str, Any]], path: str) -> Difference | None:
    """Cause lists: the set of fields first, then each cause (reason, field, message) in order."""
    mine = sorted(c.get("field", "") for c in ours)
    theirs = sorted(c.get("field", "") for c in expected)
    if mine != theirs:
        return Difference(f"{path}[*].field", mine, theirs)
    return first_difference(ours, expected, path)
