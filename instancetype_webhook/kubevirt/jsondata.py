"""Plain JSON data helpers: a fast deep copy for the small subtrees the core writes."""
from __future__ import annotations

from typing import Any

import orjson


def clone(value: Any) -> Any:
    """A deep copy of JSON data (dicts, lists, scalars)."""
    if isinstance(value, dict):
        return {k: clone(v) for k, v in value.items()} if value else {}
    if isinstance(value, list):
        return [clone(v) for v in value] if value else []
    return value


def clone_tree(value: Any) -> Any:
    """A deep copy of a large JSON tree (orjson round trip; faster than recursion for big trees).

    Falls back to `clone` when the tree holds something orjson cannot encode losslessly.
    """
    try:
        return orjson.loads(orjson.dumps(value))
    except (TypeError, orjson.JSONEncodeError):
        return clone(value)
