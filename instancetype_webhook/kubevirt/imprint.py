"""The imprint of a flattening: what the instance type, preference and defaults wrote into a VM,
recorded in the provenance annotation so that a later resize can take exactly that out again.

    patch_and_imprint(received, flat) -> (ops, imprint)
        `make_patch(received, flat)` and its imprint in one walk: exactly the operations and the
        imprint that the two steps below give, without walking the patch and the VM a second time
        (what /mutate calls).

    imprint_from_patch(received, flat, ops) -> dict
        From the JSONPatch `ops` (received -> flat; `instancetype_webhook.patch.make_patch`): `{"set": {key: value},
        "replaced": {key: [old, new]}}`, empty parts left out. `set` holds every node flattening
        created (a whole new object or list, or one new key), `replaced` every value it overwrote
        (`maxSockets`, `preferredDisableHotplug`, ...). The matchers it removed, `status` and
        `metadata` are not recorded (the matchers are in the provenance entries).

    strip(vm, imprint) -> (vm_without_imprint, edits)
        Take the imprint out of `vm` (a new object; `vm` is not changed): every recorded value the
        VM still holds is removed (or, for `replaced`, put back to the old value); objects and lists
        flattening created are removed once they are empty. A recorded value the VM no longer
        holds was changed by hand: it stays, and comes back in `edits` as
        `Edit(field, recorded, current)`.

Keys are JSON pointers, relative to `/spec/template/spec/` (`domain/cpu`), or absolute when they
start with `/` (`/spec/template/metadata`). A list element with a `name` is addressed by it
(`volumes/name=rootdisk/containerDisk/imagePullPolicy`), so the key survives reordering.
"""
from __future__ import annotations

import re
from typing import Any, Final, NamedTuple

import orjson

from instancetype_webhook.kubevirt.jsondata import clone_tree

PROVENANCE_KEY: Final = "instancetype-webhook.kubevirt.io/expanded-from"
TEMPLATE_SPEC: Final = "/spec/template/spec/"
_SKIPPED: Final[tuple[str, ...]] = ("/status", "/metadata", "/spec/instancetype", "/spec/preference")
_MISSING: Final = object()
_INDEX: Final = re.compile(r"/[0-9]+(?:/|$)")

__all__ = ["Edit", "PROVENANCE_KEY", "dotted", "imprint_from_patch", "patch_and_imprint", "read_provenance", "strip",
           "value_at"]


class Edit(NamedTuple):
    """A value flattening wrote that the VM no longer holds: `field` is dotted
    (`spec.template.spec.domain.cpu.sockets`)."""

    field: str
    recorded: Any
    current: Any
    key: str = ""


def read_provenance(vm: Any) -> dict[str, Any] | None:
    """The parsed provenance annotation of `vm`, or None (absent or not a JSON object)."""
    meta = vm.get("metadata") if type(vm) is dict else None
    annotations = meta.get("annotations") if type(meta) is dict else None
    raw = annotations.get(PROVENANCE_KEY) if type(annotations) is dict else None
    if type(raw) is not str:
        return None
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    return value if type(value) is dict else None


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~") if "~" in token else token


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1") if ("~" in token or "/" in token) else token


def _tokens(pointer: str) -> list[str]:
    return [_unescape(t) for t in pointer.split("/")[1:]]


def _key(pointer: str, flat: Any) -> str:
    """The imprint key of a patch path: list indices of named elements become `name=<name>`."""
    if _INDEX.search(pointer) is None:  # no list on the way: the pointer is the key, already escaped
        return pointer[len(TEMPLATE_SPEC):] if pointer.startswith(TEMPLATE_SPEC) else pointer
    node, out = flat, []
    for token in _tokens(pointer):
        if type(node) is list and token.isdigit() and int(token) < len(node):
            element = node[int(token)]
            name = element.get("name") if type(element) is dict else None
            out.append(f"name={name}" if type(name) is str and name else token)
            node = element
        else:
            out.append(_escape(token))
            node = node.get(token) if type(node) is dict else None
    key = "/" + "/".join(out)
    return key[len(TEMPLATE_SPEC):] if key.startswith(TEMPLATE_SPEC) else key


def _at(doc: Any, pointer: str) -> Any:
    node = doc
    for token in _tokens(pointer):
        if type(node) is dict and token in node:
            node = node[token]
        elif type(node) is list and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return _MISSING
    return node


def imprint_from_patch(received: Any, flat: Any, ops: list[dict[str, Any]]) -> dict[str, Any]:
    set_: dict[str, Any] = {}
    replaced: dict[str, Any] = {}
    search, skipped, prefix, cut = _INDEX.search, _SKIPPED, TEMPLATE_SPEC, len(TEMPLATE_SPEC)
    for op in ops:  # the hot path of /mutate: most ops are adds of a new key, no list on the way
        kind = op["op"]
        if kind == "remove":
            continue
        path = op["path"]
        if path.startswith(skipped):
            continue
        if kind == "add" and search(path) is None:
            set_[path[cut:] if path.startswith(prefix) else path] = op["value"]
            continue
        old = _at(received, path) if kind == "replace" else _MISSING
        if old is _MISSING:
            set_[_key(path, flat)] = op["value"]
        else:
            _finer(old, op["value"], path, flat, set_, replaced)
    out: dict[str, Any] = {}
    if set_:
        out["set"] = set_
    if replaced:
        out["replaced"] = replaced
    return out


def _finer(old: Any, new: Any, path: str, flat: Any, set_: dict[str, Any], replaced: dict[str, Any]) -> None:
    """Record a replaced value node by node: new keys and elements are `set`, changed leaves `replaced`."""
    if _same(old, new):
        return
    if type(old) is dict and type(new) is dict:
        for key, value in new.items():
            child = f"{path}/{_escape(key)}"
            if key in old:
                _finer(old[key], value, child, flat, set_, replaced)
            else:
                set_[_key(child, flat)] = value
    elif type(old) is list and type(new) is list:
        before = {_element_token(e, i): e for i, e in enumerate(old)}
        for i, element in enumerate(new):
            token = _element_token(element, i)
            child = f"{path}/{i}"
            if token in before:
                _finer(before[token], element, child, flat, set_, replaced)
            else:
                set_[_key(child, flat)] = element
    else:
        replaced[_key(path, flat)] = [old, new]


# ---- the patch and its imprint in one walk ---------------------------------------------------------
# The same walk as patch.make_patch, carrying along each node's imprint key (`key`: the pointer with named
# list elements as `name=<name>`, already relative to the template spec) and whether what is written under it
# is recorded (`state`), so each operation's imprint entry is written as it is made.

Imprint = dict[str, Any]
_TEMPLATE_SPEC_NODE: Final = TEMPLATE_SPEC[:-1]  # "/spec/template/spec": its children's keys are relative
# what is written under a node: not recorded (under a _SKIPPED prefix), recorded, or recorded with each child
# checked again (the root and /spec, whose children may be skipped)
_SKIP: Final = 0
_CHECK: Final = 1
_RECORD: Final = 2


def patch_and_imprint(received: Any, flat: Any) -> tuple[list[dict[str, Any]], Imprint]:
    ops: list[dict[str, Any]] = []
    set_: dict[str, Any] = {}
    replaced: dict[str, Any] = {}
    _walk(received, flat, "", "", _CHECK, ops, set_, replaced)
    out: Imprint = {}
    if set_:
        out["set"] = set_
    if replaced:
        out["replaced"] = replaced
    return ops, out


def _child_key(key: str, token: str) -> str:
    """The imprint key of a child (`token` escaped or an element token): relative below the template spec."""
    return token if key == _TEMPLATE_SPEC_NODE else f"{key}/{token}"


def _child_state(state: int, child: str) -> int:
    if state != _CHECK:
        return state
    if child.startswith(_SKIPPED):
        return _SKIP
    return _CHECK if child == "/spec" else _RECORD


def _walk(a: Any, b: Any, path: str, key: str, state: int, ops: list[dict[str, Any]], set_: dict[str, Any],
          replaced: dict[str, Any]) -> None:
    if a is b or (type(a) is type(b) and a == b):
        return
    _walk_changed(a, b, path, key, state, ops, set_, replaced)


def _walk_changed(a: Any, b: Any, path: str, key: str, state: int, ops: list[dict[str, Any]],
                  set_: dict[str, Any], replaced: dict[str, Any]) -> None:
    """_walk of two values known to differ (the caller compared them)."""
    ta, tb = type(a), type(b)
    if ta is dict and tb is dict:
        _walk_dict(a, b, path, key, state, ops, set_, replaced)
    elif ta is list and tb is list:
        _walk_list(a, b, path, key, state, ops, set_, replaced)
    else:
        ops.append({"op": "replace", "path": path, "value": b})
        if state != _SKIP:
            _finer_at(a, b, key, set_, replaced)


def _walk_dict(a: dict[str, Any], b: dict[str, Any], path: str, key: str, state: int,
               ops: list[dict[str, Any]], set_: dict[str, Any], replaced: dict[str, Any]) -> None:
    for name in a:
        if name not in b:
            ops.append({"op": "remove", "path": f"{path}/{_escape(name)}"})
    for name, value in b.items():
        old = a.get(name, _MISSING)
        if old is value or (type(old) is type(value) and old == value):  # _MISSING is never equal to a value
            continue
        token = _escape(name)
        child = f"{path}/{token}"
        child_state = _child_state(state, child)
        if old is _MISSING:
            ops.append({"op": "add", "path": child, "value": value})
            if child_state != _SKIP:
                set_[_child_key(key, token)] = value
        else:
            _walk_changed(old, value, child, _child_key(key, token), child_state, ops, set_, replaced)


def _walk_list(a: list[Any], b: list[Any], path: str, key: str, state: int, ops: list[dict[str, Any]],
               set_: dict[str, Any], replaced: dict[str, Any]) -> None:
    # element by element into buffers, as make_patch does: a whole-list replace may take their place
    mine: list[dict[str, Any]] = []
    mine_set: dict[str, Any] = {}
    mine_replaced: dict[str, Any] = {}
    common = min(len(a), len(b))
    for i in range(common):
        old, new = a[i], b[i]
        if old is new or (type(old) is type(new) and old == new):
            continue
        child = f"{path}/{i}"
        _walk_changed(old, new, child, _child_key(key, _element_token(new, i)), _child_state(state, child), mine,
                      mine_set, mine_replaced)
    for i in range(common, len(b)):
        child = f"{path}/{i}"
        mine.append({"op": "add", "path": child, "value": b[i]})
        if _child_state(state, child) != _SKIP:
            mine_set[_child_key(key, _element_token(b[i], i))] = b[i]
    for i in range(len(a) - 1, common - 1, -1):
        mine.append({"op": "remove", "path": f"{path}/{i}"})
    if len(mine) > 1 and len(mine) >= len(b):
        ops.append({"op": "replace", "path": path, "value": b})
        if state != _SKIP:
            _finer_at(a, b, key, set_, replaced)
    else:  # dict.update keeps the order and the last write of sequential assignment
        ops.extend(mine)
        set_.update(mine_set)
        replaced.update(mine_replaced)


def _finer_at(old: Any, new: Any, key: str, set_: dict[str, Any], replaced: dict[str, Any]) -> None:
    """_finer with the imprint key of `new` carried along instead of looked up from the patch path."""
    if _same(old, new):
        return
    if type(old) is dict and type(new) is dict:
        for name, value in new.items():
            child = _child_key(key, _escape(name))
            previous = old.get(name, _MISSING)
            if previous is _MISSING:
                set_[child] = value
            else:
                _finer_at(previous, value, child, set_, replaced)
    elif type(old) is list and type(new) is list:
        before = {_element_token(e, i): e for i, e in enumerate(old)}
        for i, element in enumerate(new):
            token = _element_token(element, i)
            previous = before.get(token, _MISSING)
            if previous is _MISSING:
                set_[_child_key(key, token)] = element
            else:
                _finer_at(previous, element, _child_key(key, token), set_, replaced)
    else:
        replaced[key] = [old, new]


# ---- stripping ----------------------------------------------------------------------------------

def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def dotted(key: str) -> str:
    """An imprint key as a dotted field path (`domain/cpu/sockets` -> `spec.template.spec.domain.cpu.sockets`)."""
    pointer = key if key.startswith("/") else TEMPLATE_SPEC + key
    parts: list[str] = []
    for token in _tokens(pointer):
        if token.startswith("name="):
            parts[-1] += f"[{token[5:]}]"
        elif token.isdigit() and parts:
            parts[-1] += f"[{token}]"
        else:
            parts.append(token)
    return ".".join(parts)


def _child(node: Any, token: str) -> Any:
    if type(node) is dict:
        return node.get(token, _MISSING)
    if type(node) is list:
        index = _index(node, token)
        return node[index] if index is not None else _MISSING
    return _MISSING


def _index(items: list[Any], token: str) -> int | None:
    if token.startswith("name="):
        name = token[5:]
        for i, element in enumerate(items):
            if type(element) is dict and element.get("name") == name:
                return i
        return None
    if token.isdigit() and int(token) < len(items):
        return int(token)
    return None


def _delete(parent: Any, token: str) -> None:
    if type(parent) is dict:
        parent.pop(token, None)
    elif type(parent) is list:
        index = _index(parent, token)
        if index is not None:
            del parent[index]


def _put(parent: Any, token: str, value: Any) -> None:
    if type(parent) is dict:
        parent[token] = value
    elif type(parent) is list:
        index = _index(parent, token)
        if index is not None:
            parent[index] = value


def _element_token(element: Any, i: int) -> str:
    name = element.get("name") if type(element) is dict else None
    return f"name={name}" if type(name) is str and name else str(i)


def _strip_value(current: Any, recorded: Any, key: str, edits: list[Edit]) -> Any:
    """What remains of `current` once `recorded` is taken out of it (_MISSING: nothing remains)."""
    if _same(current, recorded):
        return _MISSING
    if type(current) is dict and type(recorded) is dict:
        for name, value in recorded.items():
            if name in current:
                rest = _strip_value(current[name], value, f"{key}/{_escape(name)}", edits)
                if rest is _MISSING:
                    del current[name]
                else:
                    current[name] = rest
        return current if current else _MISSING
    if type(current) is list and type(recorded) is list:
        wanted = {_element_token(e, i): e for i, e in enumerate(recorded)}
        kept = []
        for i, element in enumerate(current):
            token = _element_token(element, i)
            if token not in wanted:
                kept.append(element)
                continue
            recorded_element = wanted[token]
            if _same(element, recorded_element):
                continue
            if token.startswith("name=") and type(recorded_element) is dict:  # the name is the element's identity
                recorded_element = {k: v for k, v in recorded_element.items() if k != "name"}
            rest = _strip_value(element, recorded_element, f"{key}/{token}", edits)
            if rest is not _MISSING:
                kept.append(rest)
        return kept if kept else _MISSING
    edits.append(Edit(dotted(key), recorded, current, key))
    return current


def _parent(vm: dict[str, Any], key: str) -> tuple[Any, str]:
    pointer = key if key.startswith("/") else TEMPLATE_SPEC + key
    if not pointer.startswith("/spec/") or pointer.startswith(_SKIPPED):  # only what flattening may write
        return _MISSING, ""
    tokens = _tokens(pointer)
    node: Any = vm
    for token in tokens[:-1]:
        node = _child(node, token)
        if node is _MISSING:
            return _MISSING, ""
    return node, tokens[-1]


def value_at(vm: dict[str, Any], key: str) -> Any:
    """The value at an imprint key in `vm`, or None when there is none."""
    parent, token = _parent(vm, key)
    value = _child(parent, token) if parent is not _MISSING else _MISSING
    return None if value is _MISSING else value


def strip(vm: dict[str, Any], imprint: dict[str, Any]) -> tuple[dict[str, Any], list[Edit]]:
    out = dict(vm)
    out["spec"] = clone_tree(vm.get("spec") or {})
    edits: list[Edit] = []
    set_ = found if type(found := imprint.get("set")) is dict else {}
    replaced = found if type(found := imprint.get("replaced")) is dict else {}
    for key in sorted(set_, reverse=True):  # deeper keys and later indices first
        parent, token = _parent(out, key)
        current = _child(parent, token)
        if current is _MISSING:
            continue
        rest = _strip_value(current, set_[key], key, edits)
        if rest is _MISSING:
            _delete(parent, token)
        elif rest is not current:  # a list comes back as a new one
            _put(parent, token, rest)
    for key, pair in replaced.items():
        if type(pair) is not list or len(pair) != 2:
            continue
        parent, token = _parent(out, key)
        current = _child(parent, token)
        if current is _MISSING:
            continue
        if _same(current, pair[1]):
            _put(parent, token, pair[0])
        else:
            edits.append(Edit(dotted(key), pair[1], current, key))
    return out, edits
