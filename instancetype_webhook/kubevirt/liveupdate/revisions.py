"""The ControllerRevisions virt-controller stores for a VM's instance type and preference
(pkg/instancetype/revision `Store`, `CreateControllerRevision`, `GenerateName`), and a Source that
sees them on top of the cluster's objects. Pure: the revisions are built in memory."""
from __future__ import annotations

from typing import Any, Final

from instancetype_webhook.kubevirt.find import INSTANCETYPE_FAMILY, OBJECT_NAME_LABEL, PREFERENCE_FAMILY
from instancetype_webhook.kubevirt.source import Source

API_VERSION: Final = "instancetype.kubevirt.io/v1beta1"
FAMILIES: Final = ((INSTANCETYPE_FAMILY, "instancetype"), (PREFERENCE_FAMILY, "preference"))


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


class LayeredSource:
    """A Source whose ControllerRevisions are `revisions` first, then `base`'s (objects come from `base`)."""

    def __init__(self, base: Source, revisions: dict[str, dict[str, Any]] | None = None):
        self.base = base
        self.revisions: dict[str, dict[str, Any]] = dict(revisions or {})
        self.default_namespace = getattr(base, "default_namespace", "default")

    def get(self, kind: str, name: str, namespace: str | None = None) -> dict[str, Any] | None:
        return self.base.get(kind, name, namespace)

    def get_revision(self, name: str, namespace: str) -> dict[str, Any] | None:
        return self.revisions.get(name) or self.base.get_revision(name, namespace)


def revision_name(vm_name: str, obj: dict[str, Any]) -> str:
    """GenerateName: `<vm>-<object>-<version>-<object uid>-<object generation>`."""
    meta = _obj(obj.get("metadata"))
    version = str(obj.get("apiVersion") or API_VERSION).rsplit("/", 1)[-1]
    return f"{vm_name}-{meta.get('name', '')}-{version}-{meta.get('uid', '')}-{meta.get('generation', 0) or 0}"


def controller_revision(vm: dict[str, Any], kind: str, obj: dict[str, Any]) -> dict[str, Any]:
    """The revision that stores `obj` (of canonical `kind`) for `vm`, as CreateControllerRevision makes it."""
    meta = _obj(obj.get("metadata"))
    vm_meta = _obj(vm.get("metadata"))
    stored_meta = {k: v for k, v in meta.items() if k not in ("labels", "annotations")}
    name = revision_name(str(vm_meta.get("name", "")), {**obj, "apiVersion": API_VERSION})
    labels = {
        OBJECT_NAME_LABEL: str(meta.get("name", "")),
        "instancetype.kubevirt.io/object-kind": kind,
        "instancetype.kubevirt.io/object-version": API_VERSION.rsplit("/", 1)[-1],
        "instancetype.kubevirt.io/object-uid": str(meta.get("uid", "")),
        "instancetype.kubevirt.io/object-generation": str(meta.get("generation", 0) or 0),
    }
    revision_meta: dict[str, Any] = {"name": name, "labels": labels}
    if vm_meta.get("namespace"):
        revision_meta["namespace"] = vm_meta["namespace"]
    return {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": revision_meta,
        "data": {"apiVersion": API_VERSION, "kind": kind, "metadata": stored_meta, "spec": _obj(obj.get("spec"))},
        "revision": 0,
    }


def revision_specs(vm: dict[str, Any]) -> dict[str, Any]:
    """The VM spec with each matcher's `revisionName` taken from its status ref (patchVMRevision)."""
    spec = dict(_obj(vm.get("spec")))
    status = _obj(vm.get("status"))
    for family, key in FAMILIES:
        matcher = spec.get(key)
        ref_name = _obj(_obj(status.get(family.status_key)).get("controllerRevisionRef")).get("name")
        if isinstance(matcher, dict) and ref_name:
            spec[key] = {**matcher, "revisionName": ref_name}
    return spec
