"""KubeVirt's CRD schemas, shipped with the package, per release: what strict field validation checks against.

`kubevirt_crds/<release line>/` holds the CustomResourceDefinitions virt-operator installs (the files of
`shared/kubevirt-crds`, as they are). A release line without a directory of its own answers with the newest
directory's schema less the fields `releases.SCHEMA_ADDED` says it lacks (`kubevirt.unknown_fields.release_schema`).
Each CRD file is read once, on first use, and only for a kind an input holds.

`unknown_fields_of(obj, release)` is the check the CLI and the playground run: the paths of `obj`'s fields that
release's API server does not know, or None when no shipped CRD describes the object's kind and version.
"""
from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from instancetype_webhook.kubevirt.prune import kind_of
from instancetype_webhook.kubevirt.releases import MAIN_PROFILE, PROFILES, ReleaseProfile
from instancetype_webhook.kubevirt.unknown_fields import release_schema, unknown_fields

__all__ = ["CRDS_DIR", "CRD_FILES", "crd", "schema_for", "unknown_fields_of"]

CRDS_DIR = Path(__file__).resolve().parent / "kubevirt_crds"
NEWEST = "main"
# kind -> the CRD file that defines it (a test checks each file's spec.names.kind)
CRD_FILES: Mapping[str, str] = {
    "VirtualMachine": "virtualmachines.kubevirt.io.yaml",
    "VirtualMachineInstance": "virtualmachineinstances.kubevirt.io.yaml",
    "VirtualMachineInstancetype": "virtualmachineinstancetypes.instancetype.kubevirt.io.yaml",
    "VirtualMachineClusterInstancetype": "virtualmachineclusterinstancetypes.instancetype.kubevirt.io.yaml",
    "VirtualMachinePreference": "virtualmachinepreferences.instancetype.kubevirt.io.yaml",
    "VirtualMachineClusterPreference": "virtualmachineclusterpreferences.instancetype.kubevirt.io.yaml",
    "KubeVirt": "kubevirts.kubevirt.io.yaml",
}
_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _directory(line: str) -> tuple[str, bool]:
    """(the directory answering for `line`, whether it is the line's own)."""
    own = (CRDS_DIR / line).is_dir()
    return (line if own else NEWEST), own


@functools.cache
def crd(kind: str, directory: str = NEWEST) -> Mapping[str, Any]:
    """The CustomResourceDefinition of `kind` in `kubevirt_crds/<directory>/` (KeyError for other kinds)."""
    with (CRDS_DIR / directory / CRD_FILES[kind]).open(encoding="utf-8") as stream:
        loaded: Mapping[str, Any] = yaml.load(stream, Loader=_LOADER)
    return loaded


@functools.cache
def schema_for(api_version: str, kind: str, line: str = NEWEST) -> Mapping[str, Any] | None:
    """The openAPIV3Schema release line `line` serves for `api_version`/`kind`; None when no shipped CRD
    defines that kind in that group and version."""
    if kind not in CRD_FILES:
        return None
    directory, own = _directory(line)
    definition = crd(kind, directory)
    spec = definition.get("spec") or {}
    group, _, version = api_version.rpartition("/")
    if group != spec.get("group"):
        return None
    for served in spec.get("versions") or ():
        if served.get("name") == version and served.get("served"):
            schema = (served.get("schema") or {}).get("openAPIV3Schema")
            if not isinstance(schema, Mapping):
                return None
            if own:
                return schema
            vmi = kind == "VirtualMachineInstance"
            schema_kind = kind_of({"kind": "VirtualMachine" if vmi else kind})
            return release_schema(schema, schema_kind, PROFILES.get(line, MAIN_PROFILE), vmi=vmi)
    return None


def unknown_fields_of(obj: Mapping[str, Any], release: ReleaseProfile = MAIN_PROFILE) -> list[str] | None:
    """The paths of `obj`'s fields `release`'s schema for its kind lacks (sorted; empty: all known); None
    when no shipped CRD describes the object (another kind, group or version: nothing to check)."""
    schema = schema_for(str(obj.get("apiVersion") or ""), str(obj.get("kind") or ""), release.line)
    return None if schema is None else unknown_fields(obj, schema)
