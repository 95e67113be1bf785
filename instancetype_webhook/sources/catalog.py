"""A Source over YAML/JSON files: a directory of manifests, or by default the bundled catalogue of the
release answered as (`instancetype_webhook.catalog.BUNDLES`: the common-instancetypes bundle that release's
virt-operator deploys), which the source names (`CatalogSource.description`).

Reference objects are the instance type and preference kinds, ControllerRevisions, and what
`inferFromVolume` reads: PersistentVolumeClaims (v1), DataVolumes and DataSources (cdi.kubevirt.io),
VolumeSnapshots (snapshot.storage.k8s.io); anything else in a file is not part of the source.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import yaml

from instancetype_webhook.catalog import BUNDLES, Bundle
from instancetype_webhook.kubevirt.prune import prune_object
from instancetype_webhook.kubevirt.releases import MAIN_PROFILE, ReleaseProfile
from instancetype_webhook.kubevirt.source import (
    CONTROLLER_REVISION,
    DATA_SOURCE,
    DATA_VOLUME,
    KINDS,
    PERSISTENT_VOLUME_CLAIM,
    VOLUME_KINDS,
    VOLUME_SNAPSHOT,
    InMemorySource,
)
from instancetype_webhook.sources.compact import compact

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
LIST_KINDS = frozenset(f"{kind}List" for kind in (*KINDS, CONTROLLER_REVISION, *VOLUME_KINDS)) | {"List"}
# the API group of each volume kind (a same-named kind of another group is not one of them)
VOLUME_GROUPS = {PERSISTENT_VOLUME_CLAIM: "", DATA_VOLUME: "cdi.kubevirt.io", DATA_SOURCE: "cdi.kubevirt.io",
                 VOLUME_SNAPSHOT: "snapshot.storage.k8s.io"}


class CatalogError(ValueError):
    """A manifest that cannot be read or is not a Kubernetes object."""


# A YAML alias (`*a`) shares the anchored node; anything that copies or serialises the document expands it again
# each time. Past this many nodes added by aliases (a "billion laughs" document: 9 levels of 9 aliases are 387
# million), or a node inside itself, the document is refused, as kubectl's YAML reader refuses excessive aliasing.
MAX_ALIAS_EXPANSION = 1_000_000


def alias_expansion(doc: Any) -> float:
    """How many more nodes `doc` has expanded than as loaded (0 without aliases; inf for a node inside itself)."""
    sizes: dict[int, int] = {}
    opened: set[int] = set()
    unique = 0
    stack: list[tuple[Any, bool]] = [(doc, False)]
    while stack:
        node, closing = stack.pop()
        children = list(node.values()) if isinstance(node, dict) else node
        key = id(node)
        if closing:
            opened.discard(key)
            sizes[key] = 1 + sum(sizes[id(c)] if isinstance(c, (dict, list)) else 1 for c in children)
            continue
        if key in sizes:
            continue
        if key in opened:
            return float("inf")
        opened.add(key)
        nested = [c for c in children if isinstance(c, (dict, list))]
        unique += 1 + len(children) - len(nested)
        stack.append((node, True))
        stack.extend((c, False) for c in nested)
    return sizes.get(id(doc), 1) - unique if isinstance(doc, (dict, list)) else 0


def iter_documents(text: str, origin: str = "<input>") -> Iterator[dict[str, Any]]:
    """Every object in a multi-document YAML or JSON text; `List` kinds are flattened.

    One document at a time: a caller that keeps a smaller copy of each (the catalogue compacts them) never holds
    every parsed document at once. An error (bad YAML, a YAML bomb) raises when its document is reached."""
    stream = yaml.load_all(text, Loader=yaml.CSafeLoader if hasattr(yaml, "CSafeLoader") else yaml.SafeLoader)
    aliases = "*" in text  # an alias is written `*name`: without one there is nothing to expand
    while True:
        try:
            doc = next(stream)
        except StopIteration:
            return
        except yaml.YAMLError as exc:
            raise CatalogError(f"{origin}: not valid YAML or JSON: {exc}".splitlines()[0]) from exc
        if aliases and alias_expansion(doc) > MAX_ALIAS_EXPANSION:
            raise CatalogError(f"{origin}: refused: its YAML aliases expand past {MAX_ALIAS_EXPANSION:,} nodes "
                               "(a YAML bomb, or an anchor inside itself)")
        if doc is None:
            continue
        if not isinstance(doc, dict):
            raise CatalogError(f"{origin}: expected a Kubernetes object, got {type(doc).__name__}")
        if doc.get("kind") in LIST_KINDS and isinstance(doc.get("items"), list):
            yield from (item for item in doc["items"] if isinstance(item, dict))
        else:
            yield doc


def is_volume_object(obj: dict[str, Any]) -> bool:
    """A PVC, DataVolume, DataSource or VolumeSnapshot (by kind, and by group when apiVersion is given)."""
    kind, api_version = obj.get("kind"), obj.get("apiVersion")
    if kind not in VOLUME_GROUPS:
        return False
    return not isinstance(api_version, str) or not api_version or api_version.rpartition("/")[0] == VOLUME_GROUPS[kind]


def is_reference_object(obj: dict[str, Any]) -> bool:
    return obj.get("kind") in KINDS or obj.get("kind") == CONTROLLER_REVISION or is_volume_object(obj)


def manifest_files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.rglob("*") if p.is_file() and p.suffix in MANIFEST_SUFFIXES)


Found = list[tuple[Path, dict[str, Any]]]  # (the file, an object of another kind) that a reader asked for


def load_objects(paths: Iterable[Path], also: str = "", found: Found | None = None) -> list[dict[str, Any]]:
    """The reference objects of the files (compacted); objects of kind `also` go to `found` with their file (the
    same pass: a catalogue of thousands of objects is parsed once)."""
    objects: list[dict[str, Any]] = []
    for path in paths:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CatalogError(f"{path}: cannot read: {exc}") from exc
        for obj in iter_documents(text, str(path)):
            if is_reference_object(obj):
                objects.append(compact(obj))
            elif also and found is not None and obj.get("kind") == also:
                found.append((path, obj))
    return objects


def read_catalog(directory: str | Path, also: str) -> tuple[list[dict[str, Any]], Found]:
    """The reference objects under `directory` and, in the same pass, its objects of kind `also`."""
    root = Path(str(directory))
    if not root.is_dir():
        raise CatalogError(f"{root}: not a directory")
    found: Found = []
    return load_objects(manifest_files(root), also, found), found


class CatalogSource(InMemorySource):
    """The objects of a catalogue, and where they came from: `bundle` (None for a directory given) and
    `description`, e.g. `bundled catalogue common-instancetypes v1.6.0 (the bundle KubeVirt v1.8.x deploys)`."""

    def __init__(self, objects: Iterable[dict[str, Any]] = (), default_namespace: str = "default",
                 bundle: Bundle | None = None, description: str = ""):
        super().__init__(objects, default_namespace)
        self.bundle = bundle
        self.description = description


def bundle_for(release: ReleaseProfile) -> Bundle:
    """The common-instancetypes bundle `release`'s virt-operator deploys (by release line)."""
    return BUNDLES[release.line]


def describe_catalog(directory: str | Path | None, release: ReleaseProfile = MAIN_PROFILE) -> str:
    """What `load_catalog(directory, release=release)` reads, in words."""
    if directory is not None:
        return f"catalog {directory}"
    return f"bundled catalogue {bundle_for(release).describe()}"


def load_catalog(directory: str | Path | None = None, default_namespace: str = "default",
                 release: ReleaseProfile = MAIN_PROFILE, read: list[dict[str, Any]] | None = None) -> CatalogSource:
    """The instance types, preferences and ControllerRevisions found under `directory` (if None: the bundle
    `release` deploys), as `release`'s API server stores them (pruned to its schema). `read`: the directory's
    objects as `read_catalog` returned them (not read again)."""
    bundle = bundle_for(release) if directory is None else None
    if read is not None:
        loaded = read
    elif bundle is not None:
        loaded = load_objects(bundle.files())
    else:
        loaded = read_catalog(Path(str(directory)), "")[0]
    objects = [prune_object(obj, release) for obj in loaded]
    return CatalogSource(objects, default_namespace, bundle, describe_catalog(directory, release))
