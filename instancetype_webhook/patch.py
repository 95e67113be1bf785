"""Minimal RFC 6902 JSON Patch from the VM as received to the VM we want stored.

A structural walk, not a generic diff: it descends only into objects that differ (a C-level `==`
on each sub-object decides), so the unchanged bulk of a VM (cloud-init user data, volumes, unknown
fields) costs one comparison and produces nothing. Operations are targeted: a changed scalar is a
`replace` at its own path, a new key an `add`, a dropped key a `remove`; lists are patched element
by element with tail `add`/`remove`, or replaced as a whole when that is shorter. Applying the
result with any RFC 6902 implementation to the received object gives the target exactly, keys the
target does not change keep their order, and diffing an object with itself gives no operations.
"""
from __future__ import annotations

from typing import Any

Op = dict[str, Any]


def escape(key: str) -> str:
    """One JSON-pointer reference token (RFC 6901): `~` -> `~0`, `/` -> `~1`."""
    if "~" in key or "/" in key:
        return key.replace("~", "~0").replace("/", "~1")
    return key


def pointer(*keys: str | int) -> str:
    return "".join("/" + escape(str(k)) for k in keys)


def make_patch(received: Any, target: Any) -> list[Op]:
    """The operations that turn `received` into `target` (both plain JSON data)."""
    ops: list[Op] = []
    _walk(received, target, "", ops)
    return ops


def _equal(a: Any, b: Any) -> bool:
    # JSON types must match too: Python says True == 1 == 1.0, JSON does not.
    return a is b or (type(a) is type(b) and a == b)


def _walk(a: Any, b: Any, path: str, ops: list[Op]) -> None:
    if _equal(a, b):
        return
    ta, tb = type(a), type(b)
    if ta is dict and tb is dict:
        _walk_dict(a, b, path, ops)
    elif ta is list and tb is list:
        _walk_list(a, b, path, ops)
    else:
        ops.append({"op": "replace", "path": path, "value": b})


def _walk_dict(a: dict[str, Any], b: dict[str, Any], path: str, ops: list[Op]) -> None:
    for key in a:
        if key not in b:
            ops.append({"op": "remove", "path": path + "/" + escape(key)})
    for key, value in b.items():
        if key in a:
            old = a[key]
            if old is value or (type(old) is type(value) and old == value):  # _equal, inlined: most keys
                continue
            _walk(old, value, path + "/" + escape(key), ops)
        else:
            ops.append({"op": "add", "path": path + "/" + escape(key), "value": value})


def _walk_list(a: list[Any], b: list[Any], path: str, ops: list[Op]) -> None:
    mine: list[Op] = []
    common = min(len(a), len(b))
    for i in range(common):
        _walk(a[i], b[i], f"{path}/{i}", mine)
    for i in range(common, len(b)):
        mine.append({"op": "add", "path": f"{path}/{i}", "value": b[i]})
    for i in range(len(a) - 1, common - 1, -1):
        mine.append({"op": "remove", "path": f"{path}/{i}"})
    if len(mine) > 1 and len(mine) >= len(b):
        # As many operations as elements: one replace of the list says it more plainly.
        ops.append({"op": "replace", "path": path, "value": b})
    else:
        ops.extend(mine)
