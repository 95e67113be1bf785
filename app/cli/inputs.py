"""Input handling shared by the offline commands (`expand`, `validate`, `domxml`).

`-f PATH` (repeatable; `-` is stdin) names YAML or JSON files, each possibly holding several documents or
a `List`. VirtualMachines are the subjects; instance types, preferences and ControllerRevisions found in
any file join the reference source (a KubeVirt object is the cluster configuration: `Inputs.cluster_settings`), on top of the catalogue (the bundled common-instancetypes unless
`--catalog DIR` names another directory; `build_source` builds that source). `read_inputs` serves
inputs holding only instance types or preferences (`validate`); `read_single` those that need exactly
one subject (`expand`, `domxml`). Anything unreadable raises InputError with one clear line.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from app.kubevirt.configuration import kubevirt_problem, settings_from_kubevirt
from app.kubevirt.settings import DEFAULT_SETTINGS, ClusterSettings
from app.kubevirt.source import InMemorySource
from app.sources.catalog import CatalogError, is_reference_object, iter_documents, load_catalog

VIRTUAL_MACHINE = "VirtualMachine"
KUBEVIRT = "KubeVirt"


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

    def cluster_settings(self) -> ClusterSettings:
        """The cluster configuration: a KubeVirt object among the documents (its spec.configuration merged
        over KubeVirt's defaults, status.defaultArchitecture), else KubeVirt's defaults. InputError for more
        than one, or for a configuration virt-api would refuse."""
        kubevirts = [doc for doc in self.documents if doc.get("kind") == KUBEVIRT]
        if not kubevirts:
            return DEFAULT_SETTINGS
        if len(kubevirts) > 1:
            raise InputError(f"{len(kubevirts)} KubeVirt objects; give at most one")
        kubevirt = kubevirts[0]
        if not isinstance(kubevirt.get("spec", {}), dict):
            raise InputError("the KubeVirt object's spec is not an object")
        problem = kubevirt_problem(kubevirt)
        if problem is not None:
            raise InputError(f"the KubeVirt object's configuration is invalid: {problem}")
        return settings_from_kubevirt(kubevirt)


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
        for doc in docs:
            meta = doc.get("metadata")
            if is_reference_object(doc) and not (isinstance(meta, dict) and isinstance(meta.get("name"), str)):
                raise InputError(f"{origin}: a {doc['kind']} without metadata.name")
        inputs.files.append((origin, docs))
    return inputs


def read_single(paths: list[str], stdin: TextIO | None, kinds: tuple[str, ...]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The one document whose kind is in `kinds`, and the reference objects found in `paths`."""
    subject, inputs = read_subject(paths, stdin, kinds)
    return subject, inputs.reference_objects


def read_subject(paths: list[str], stdin: TextIO | None, kinds: tuple[str, ...]) -> tuple[dict[str, Any], Inputs]:
    """The one document whose kind is in `kinds`, and everything read from `paths`."""
    inputs = read_inputs(paths, stdin)
    subjects = [doc for doc in inputs.documents if doc.get("kind") in kinds]
    wanted = " or ".join(kinds)
    if not subjects:
        raise InputError(f"no document of kind {wanted} in {', '.join(paths)}")
    if len(subjects) > 1:
        raise InputError(f"{len(subjects)} documents of kind {wanted}; give exactly one")
    return subjects[0], inputs


def build_source(objects: list[dict[str, Any]], catalog: str | None, vm: dict[str, Any]) -> InMemorySource:
    """The catalogue's objects, then the given ones on top (they win on the same kind/namespace/name)."""
    namespace = (vm.get("metadata") or {}).get("namespace") or "default"
    source = load_catalog(catalog, default_namespace=namespace)
    for obj in objects:
        source.add(obj)
    return source
