"""What "nothing lost" means, as checks on (VM as received, our JSONPatch).

A patch may only touch what the instance type, the preference and the defaults own:
- the matchers themselves (`/spec/instancetype`, `/spec/preference`, removed) and the status refs;
- the VMI template spec fields an instance type, a preference or the VM template defaults set;
- the template's metadata annotations/labels a preference or instance type carries, and our
  provenance annotation.
Every leaf value the VM already had survives unchanged, except matchers/status refs, Go zero
values ("", 0, false, empties) in owned places, which upstream treats as unset and may fill, and
the fields upstream always overwrites (instance type `maxSockets`, preference `features.acpi` and
`devices.disableHotplug`).
Objects nothing touched keep their key order.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import jsonpatch
import orjson

TEMPLATE_SPEC = "/spec/template/spec"
OWNED = re.compile("|".join([
    r"^/spec/(instancetype|preference)(/|$)",
    r"^/status(/(instancetypeRef|preferenceRef)(/|$)|$)",
    r"^/metadata/annotations(/instancetype-webhook\.kubevirt\.io~1expanded-from)?$",
    r"^/spec/template$",  # Go prints the template's metadata first: the template may be re-ordered
    r"^/spec/template/metadata(/(annotations|labels)(/.*)?)?$",
    TEMPLATE_SPEC + r"$",
    TEMPLATE_SPEC + r"/domain(/.*)?$",
    TEMPLATE_SPEC + r"/volumes/\d+/containerDisk/imagePullPolicy$",  # a VM template default
    TEMPLATE_SPEC + r"/(networks|nodeSelector|schedulerName|subdomain|terminationGracePeriodSeconds|"
                    r"evictionStrategy|architecture|hostname)(/.*)?$",
]))


def strict(value: Any) -> bytes:
    """Canonical bytes: equal only when equal as JSON (types included), key order ignored."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def leaves(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """(JSON pointer, value) of every scalar and empty container."""
    if type(value) is dict and value:
        for key, sub in value.items():
            yield from leaves(sub, path + "/" + key.replace("~", "~0").replace("/", "~1"))
    elif type(value) is list and value:
        for i, sub in enumerate(value):
            yield from leaves(sub, f"{path}/{i}")
    else:
        yield path, value


def resolve(doc: Any, path: str) -> tuple[bool, Any]:
    try:
        return True, jsonpatch.JsonPointer(path).resolve(doc)
    except (jsonpatch.JsonPointerException, KeyError, IndexError, TypeError):
        return False, None


def is_zero(value: Any) -> bool:
    """A Go zero value: upstream treats it as unset (a preference may fill it) and Go's encoder omits
    it for plain fields (`false` of a plain bool such as `disableHotplug`), so it may go."""
    if type(value) is bool:
        return value is False
    return value is None or value == "" or value == 0 or value == {} or value == []


def overwritten_by(instancetype_spec: dict[str, Any] | None, preference_spec: dict[str, Any] | None) -> tuple[str, ...]:
    """Paths set whatever the VM says (spec 2.3.1 and 2.6): the instance type's `cpu.maxSockets`;
    the preference's `preferredAcpi` (a plain FeatureState) and `preferredDisableHotplug` (a plain bool)."""
    prefs = preference_spec or {}
    out = []
    if ((instancetype_spec or {}).get("cpu") or {}).get("maxSockets") is not None:
        out.append(TEMPLATE_SPEC + "/domain/cpu/maxSockets")
    if ((prefs.get("features") or {}).get("preferredAcpi")) is not None:
        out.append(TEMPLATE_SPEC + "/domain/features/acpi")
    if ((prefs.get("devices") or {}).get("preferredDisableHotplug")) is not None:
        out.append(TEMPLATE_SPEC + "/domain/devices/disableHotplug")
    return tuple(out)


def lost_leaves(received: Any, patched: Any, overwritten: tuple[str, ...] = ()) -> list[str]:
    """Leaves of `received` that `patched` no longer has unchanged, outside what may change."""
    problems = []
    for path, value in leaves(received):
        found, now = resolve(patched, path)
        if found and strict(now) == strict(value):
            continue
        if any(path == o or path.startswith(o + "/") for o in overwritten):
            continue
        if OWNED.match(path) and (path.startswith(("/spec/instancetype", "/spec/preference", "/status"))
                                  or is_zero(value)):
            continue
        problems.append(f"{path}: {value!r} -> {'(gone)' if not found else repr(now)}")
    return problems


def foreign_ops(ops: list[dict[str, Any]]) -> list[str]:
    return [f"{op['op']} {op['path']}" for op in ops if not OWNED.match(op["path"])]


def dicts(value: Any, path: str = "") -> Iterator[tuple[str, dict]]:
    if type(value) is dict:
        yield path, value
        for key, sub in value.items():
            yield from dicts(sub, path + "/" + key.replace("~", "~0").replace("/", "~1"))
    elif type(value) is list:
        for i, sub in enumerate(value):
            yield from dicts(sub, f"{path}/{i}")


def reordered(received: Any, patched: Any, ops: list[dict[str, Any]]) -> list[str]:
    """Objects whose keys changed order: untouched objects must keep their keys exactly; in touched
    ones the keys that remain keep their relative order (new keys may come anywhere)."""
    touched = [op["path"] for op in ops]
    problems = []
    for path, obj in dicts(received):
        found, now = resolve(patched, path)
        if not found or type(now) is not dict:
            continue
        hit = any(t == path or t.startswith(path + "/") or path.startswith(t + "/") for t in touched)
        kept = [k for k in now if k in obj] if hit else list(now)
        if kept != [k for k in obj if k in now or not hit]:
            problems.append(f"{path or '/'}: {list(obj)} -> {list(now)}")
    return problems


def check(received_bytes: bytes, ops: list[dict[str, Any]], expected: Any | None = None,
          overwritten: tuple[str, ...] = ()) -> list[str]:
    """All problems of `ops` applied to the object decoded from `received_bytes` by the standard
    library (jsonpatch, a standard RFC 6902 implementation, on the bytes exactly as received)."""
    import json

    received = json.loads(received_bytes)
    try:
        patched = jsonpatch.apply_patch(received, ops, in_place=False)
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as exc:
        return [f"patch does not apply: {exc}"]
    problems = []
    if expected is not None and strict(patched) != strict(expected):
        problems.append("patched object differs from the expansion")
    problems += [f"op outside owned fields: {p}" for p in foreign_ops(ops)]
    problems += [f"lost: {p}" for p in lost_leaves(received, patched, overwritten)]
    problems += [f"key order: {p}" for p in reordered(received, patched, ops)]
    return problems
