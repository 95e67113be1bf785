"""Input handling shared by the offline commands (`validate`, and available to `expand`).

`-f PATH` (repeatable; `-` is stdin) names YAML or JSON files, each possibly holding several documents or
a `List`. VirtualMachines are the subjects; instance types, preferences and ControllerRevisions found in
any file join the reference source, on top of the catalogue (the bundled common-instancetypes unless
`--catalog DIR` names another directory; `app.cli.expand.build_source` builds that source). Unlike
`expand`, which needs exactly one VirtualMachine, these readers also serve inputs holding only instance
types or preferences. Anything unreadable raises InputError with one clear line.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from app.sources.catalog import CatalogError, is_reference_object, iter_documents

VIRTUAL_MACHINE = "VirtualMachine"


class InputError(ValueError):
    """Input that cannot be read or understood; the message is one line for the user."""


@dataclass
class Inputs:
    """What the files held: the documents of each file, in order, and every reference object."""

    files: list[tuple[str, list[dict[str, Any]]]] = field(default_factory=list)

    @property
    def documents(self) -> list[dict[str, Any]]:
        return [doc for _, docs in self.files for doc in docs]

    @property
    def vms(self) -> list[dict[str, Any]]:
        return [doc for doc in self.documents if doc.get("kind") == VIRTUAL_MACHINE]

    @property
    def reference_objects(self) -> list[dict[str, Any]]:
        return [doc for doc in self.documents if is_reference_object(doc)]


def read_text(path: str, stdin: TextIO | None = None) -> str:
    if path == "-":
        stream = stdin or sys.stdin
        try:
            data = stream.buffer.read() if hasattr(stream, "buffer") else stream.read()
            return data.decode("utf-8") if isinstance(data, bytes) else data
        except (OSError, UnicodeError) as exc:
            raise InputError(f"<stdin>: cannot read: {exc}") from exc
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise InputError(f"{path}: cannot read: {reason}") from exc


def read_inputs(paths: list[str], stdin: TextIO | None = None) -> Inputs:
    """Every document of every file; raises InputError for unreadable files or non-object documents."""
    inputs = Inputs()
    for path in paths:
        origin = "<stdin>" if path == "-" else path
        try:
            docs = list(iter_documents(read_text(path, stdin), origin))
        except CatalogError as exc:
            raise InputError(str(exc)) from exc
        except UnicodeError as exc:
            raise InputError(f"{origin}: not valid UTF-8 text: {exc}") from exc
        if not docs:
            raise InputError(f"{origin}: no Kubernetes object found")
        inputs.files.append((origin, docs))
    return inputs
