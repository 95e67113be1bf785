"""YAML text -> the object it holds, and the line and column where each of its fields starts.

Parsing is PyYAML's safe loader with two changes that match what the API server does with YAML
(sigs.k8s.io/yaml): timestamps stay strings, and every mapping key must be a string. A YAML alias
expands where it is used, so the node walk has a budget (a "billion laughs" document is refused) and
a depth limit. Errors carry the parser's line and column (1-based).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import yaml

MAX_NODES = 200_000
MAX_DEPTH = 200
Path = tuple[str | int, ...]
_SEGMENT = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


@dataclass(frozen=True)
class Position:
    line: int  # 1-based
    column: int  # 1-based


class YAMLProblem(ValueError):
    """Text that is not one YAML document of JSON-compatible data; line/column point at the problem."""

    def __init__(self, message: str, line: int = 0, column: int = 0):
        where = f"line {line}, column {column}: " if line else ""
        super().__init__(f"{where}{message}")
        self.message, self.line, self.column = message, line, column


_BASE: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: ~6x faster, same marks


class _Loader(_BASE):  # type: ignore[valid-type,misc]  # a base chosen at import time (libyaml when built with it)
    """The safe loader whose timestamps stay the strings they were written as."""


_Loader.add_constructor("tag:yaml.org,2002:timestamp", _Loader.construct_yaml_str)


@dataclass(frozen=True)
class Parsed:
    value: Any
    positions: dict[Path, Position]


def _mark(node: yaml.Node) -> Position:
    return Position(node.start_mark.line + 1, node.start_mark.column + 1)


def _walk(root: yaml.Node) -> dict[Path, Position]:
    """Where each path starts: a mapping entry at its key, a list item at the item."""
    positions: dict[Path, Position] = {(): _mark(root)}
    stack: list[tuple[yaml.Node, Path]] = [(root, ())]
    budget = MAX_NODES
    while stack:
        node, path = stack.pop()
        budget -= 1
        if budget < 0:
            raise YAMLProblem(f"the document expands to more than {MAX_NODES} nodes (YAML aliases?)")
        if len(path) > MAX_DEPTH:
            raise YAMLProblem(f"nested deeper than {MAX_DEPTH} levels", *_astuple(_mark(node)))
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if key.tag == "tag:yaml.org,2002:merge":  # `<<: *base`: its entries belong to this mapping
                    stack.extend((v, path) for v in (value.value if isinstance(value, yaml.SequenceNode) else [value]))
                    continue
                if not isinstance(key, yaml.ScalarNode) or key.tag != "tag:yaml.org,2002:str":
                    raise YAMLProblem("a mapping key is not a string (JSON and Kubernetes need string keys)",
                                      *_astuple(_mark(key)))
                child = (*path, str(key.value))
                positions.setdefault(child, _mark(key))
                stack.append((value, child))
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                child = (*path, index)
                positions.setdefault(child, _mark(item))
                stack.append((item, child))
    return positions


def _astuple(position: Position) -> tuple[int, int]:
    return position.line, position.column


def problem_of(exc: yaml.YAMLError) -> YAMLProblem:
    """A PyYAML error as a YAMLProblem: `context: problem`, at the problem's line and column (1-based)."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    context = getattr(exc, "context", None)
    message = f"{context}: {problem}" if context and problem else str(problem)
    if mark is None:
        return YAMLProblem(message)
    return YAMLProblem(message, mark.line + 1, mark.column + 1)


def parse(text: str) -> Parsed:
    """The one document of `text` and the positions of its fields; YAMLProblem otherwise."""
    loader = _Loader(text)
    try:
        if not loader.check_node():
            raise YAMLProblem("the text is empty: paste a VirtualMachine")
        node = loader.get_node()
        if node is None or node.tag == "tag:yaml.org,2002:null":
            raise YAMLProblem("the text holds no object: paste a VirtualMachine")
        if loader.check_node():
            extra = _mark(loader.get_node() or node)
            raise YAMLProblem("more than one YAML document: give only the VirtualMachine", extra.line, 1)
        positions = _walk(node)
        value = loader.construct_document(node)
        problem = json_problem(value)
        if problem is not None:
            where = positions.get(problem[0]) or Position(0, 0)
            raise YAMLProblem(problem[1], where.line, where.column)
    except yaml.YAMLError as exc:
        raise problem_of(exc) from exc
    except RecursionError as exc:
        raise YAMLProblem(f"nested deeper than {MAX_DEPTH} levels") from exc
    finally:
        loader.dispose()
    return Parsed(value, positions)


def json_problem(value: Any) -> tuple[Path, str] | None:
    """The first value JSON (and so the API server) cannot carry, with its path: a binary, a set, a
    non-finite float, an integer past 64 bits. None when everything is plain JSON data."""
    stack: list[tuple[Any, Path]] = [(value, ())]
    while stack:
        node, path = stack.pop()
        if isinstance(node, dict):
            stack.extend((v, (*path, k)) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((v, (*path, i)) for i, v in enumerate(node))
        elif isinstance(node, bool) or node is None or isinstance(node, str):
            continue
        elif isinstance(node, int):
            if not -(2**63) <= node < 2**64:
                return path, "an integer larger than 64 bits"
        elif isinstance(node, float):
            if node != node or node in (float("inf"), float("-inf")):
                return path, f"{node} is not a JSON number"
        else:
            return path, f"a YAML {type(node).__name__} is not JSON data"
    return None


def split_field(field: str) -> list[str | int]:
    """`spec.template.spec.domain.devices.disks[0].name` -> its segments (list indexes as ints).

    A JSON pointer (`/spec/template/...`) is split on slashes instead."""
    if field.startswith("/"):
        parts = [p.replace("~1", "/").replace("~0", "~") for p in field[1:].split("/")]
        return [int(p) if p.isdigit() else p for p in parts]
    return [m.group(1) if m.group(1) is not None else int(m.group(2)) for m in _SEGMENT.finditer(field)]


def locate(positions: dict[Path, Position], field: str, prefix: Path = ()) -> tuple[Position | None, bool]:
    """Where `field` (a cause's path) is written: (position, exact). Keys holding dots
    (`vm.kubevirt.io/os`) are matched greedily; when the field is not written, the nearest written
    ancestor (exact False); (None, False) when not even `prefix` is."""
    segments = split_field(field)
    path: Path = prefix
    if path not in positions:
        return None, False
    i = 0
    while i < len(segments):
        step = _step(positions, path, segments, i)
        if step is None:
            return positions[path], False
        path, i = step
    return positions[path], True


def _step(positions: dict[Path, Position], path: Path, segments: list[str | int],
          i: int) -> tuple[Path, int] | None:
    """The next written path from `path` consuming segments[i:], longest dotted key first."""
    if isinstance(segments[i], int):
        child: Path = (*path, segments[i])
        return (child, i + 1) if child in positions else None
    for j in range(len(segments), i, -1):
        words = segments[i:j]
        if all(isinstance(w, str) for w in words):
            child = (*path, ".".join(str(w) for w in words))
            if child in positions:
                return child, j
    return None


_DUMPER: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml's emitter when built


class _Dumper(_DUMPER):  # type: ignore[valid-type,misc]  # a base chosen at import time
    """The safe dumper, writing multi-line strings as literal blocks (`|`), as people write cloud-init."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    block = "\n" in value and not any(c in value for c in "\r\t\x85\u2028\u2029") and value == value.rstrip(" ")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|" if block else None)


_Dumper.add_representer(str, _str)


_LINE_BREAKS = ("\x85", "\u2028", "\u2029", "\ufeff")  # PyYAML writes these raw, then reads them as breaks


def dump(value: Any) -> str:
    """`value` as block YAML, keys in their order (what the page shows, and what `parse` reads back).
    Non-ASCII text is written as itself, unless it holds a character PyYAML cannot read back raw."""
    text: str = yaml.dump(value, Dumper=_Dumper, sort_keys=False, default_flow_style=False, allow_unicode=True,
                          width=100)
    if any(c in text for c in _LINE_BREAKS):
        text = yaml.dump(value, Dumper=_Dumper, sort_keys=False, default_flow_style=False, allow_unicode=False,
                         width=100)
    return text
