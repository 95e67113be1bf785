"""Semantic comparison of JSON documents as the conformance README prescribes: map order is
irrelevant, list order matters, and quantities compare by value (4Gi == 4294967296)."""
from __future__ import annotations

from typing import Any

from instancetype_webhook.kubevirt.quantity import QuantityError, parse


def _same_scalar(a: Any, b: Any) -> bool:
    if a == b and type(a) is type(b):
        return True
    if isinstance(a, bool) or isinstance(b, bool):
        return False
    if isinstance(a, (str, int, float)) and isinstance(b, (str, int, float)):
        try:
            return parse(a).value == parse(b).value
        except QuantityError:
            return False
    return False


def first_difference(actual: Any, expected: Any, path: str = "") -> str | None:
    """None when equal, else a one-line description of the first difference."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        for key in sorted(set(expected) | set(actual)):
            where = f"{path}.{key}" if path else key
            if key not in actual:
                return f"{where}: missing (expected {expected[key]!r})"
            if key not in expected:
                return f"{where}: unexpected {actual[key]!r}"
            diff = first_difference(actual[key], expected[key], where)
            if diff:
                return diff
        return None
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            return f"{path}: {len(actual)} items, expected {len(expected)}: {actual!r} vs {expected!r}"
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            diff = first_difference(a, e, f"{path}[{i}]")
            if diff:
                return diff
        return None
    if isinstance(expected, (dict, list)) or isinstance(actual, (dict, list)):
        return f"{path}: {actual!r}, expected {expected!r}"
    return None if _same_scalar(actual, expected) else f"{path}: {actual!r}, expected {expected!r}"
