"""Matchers -> specs, through a Source (upstream `pkg/instancetype/find`, `preference/find`).

Order for a matcher on a VM in namespace `ns`:
1. no matcher -> None;
2. `revisionName` -> the ControllerRevision `ns/<revisionName>` (missing -> NotFound);
3. `status.<x>Ref.controllerRevisionRef.name` -> that revision, used only when its
   `instancetype.kubevirt.io/object-name` label equals the matcher name;
4. the kind (case-insensitive singular/plural resource name; empty = the cluster kind) picks a
   namespaced (`ns/<name>`) or cluster (`<name>`) lookup; anything else is a bad request.
A revision's stored object is decoded by `instancetype_webhook.kubevirt.revision.stored_spec` (upstream's compatibility
package: v1beta1 only, Go type names in the errors); the matcher's name and kind are not compared with it.
Errors are ExpandError values carrying upstream's exact text.
"""
from __future__ import annotations

from typing import Any, Final

from instancetype_webhook.kubevirt.causes import ExpandError
from instancetype_webhook.kubevirt.releases import ReleaseProfile
from instancetype_webhook.kubevirt.revision import stored_spec
from instancetype_webhook.kubevirt.source import (
    CLUSTER_INSTANCETYPE,
    CLUSTER_PREFERENCE,
    INSTANCETYPE,
    PREFERENCE,
    Source,
)

GROUP: Final = "instancetype.kubevirt.io"
OBJECT_NAME_LABEL: Final = "instancetype.kubevirt.io/object-name"

# kind -> (plural resource, singular resource)
RESOURCES: Final = {
    INSTANCETYPE: ("virtualmachineinstancetypes", "virtualmachineinstancetype"),
    CLUSTER_INSTANCETYPE: ("virtualmachineclusterinstancetypes", "virtualmachineclusterinstancetype"),
    PREFERENCE: ("virtualmachinepreferences", "virtualmachinepreference"),
    CLUSTER_PREFERENCE: ("virtualmachineclusterpreferences", "virtualmachineclusterpreference"),
}


class _Family:
    def __init__(self, matcher_key: str, status_key: str, label: str, namespaced: str, cluster: str):
        self.matcher_key = matcher_key
        self.status_key = status_key
        self.label = label
        self.namespaced = namespaced
        self.cluster = cluster
        self.kinds = {name: namespaced for name in RESOURCES[namespaced]}
        self.kinds.update({name: cluster for name in RESOURCES[cluster]})
        self.kinds[""] = cluster

    def resolve_kind(self, kind: str) -> str:
        try:
            return self.kinds[kind.lower()]
        except KeyError:
            raise ExpandError("badRequest", f"got unexpected kind in {self.label}: {kind}") from None


INSTANCETYPE_FAMILY: Final = _Family("instancetype", "instancetypeRef", "InstancetypeMatcher", INSTANCETYPE,
                                     CLUSTER_INSTANCETYPE)
PREFERENCE_FAMILY: Final = _Family("preference", "preferenceRef", "PreferenceMatcher", PREFERENCE, CLUSTER_PREFERENCE)


def resolve_kind(matcher: dict[str, Any] | None, preference: bool = False) -> str:
    """The canonical kind a matcher names (raises badRequest for an unknown kind)."""
    family = PREFERENCE_FAMILY if preference else INSTANCETYPE_FAMILY
    return family.resolve_kind(str((matcher or {}).get("kind") or ""))


def not_found(resource: str, name: str) -> ExpandError:
    return ExpandError("notFound", f'{resource} "{name}" not found')


def find_instancetype_spec(vm: dict[str, Any], source: Source, release: ReleaseProfile) -> dict[str, Any] | None:
    """The instance type spec the VM references, or None without a matcher."""
    return _find(vm, source, INSTANCETYPE_FAMILY, release)


def find_preference_spec(vm: dict[str, Any], source: Source, release: ReleaseProfile) -> dict[str, Any] | None:
    """The preference spec the VM references, or None without a matcher."""
    return _find(vm, source, PREFERENCE_FAMILY, release)


def _obj(value: Any) -> dict[str, Any]:
    """`value` when it is a JSON object, else an empty one (mis-typed optional parts are ignored)."""
    return value if isinstance(value, dict) else {}


def _find(vm: dict[str, Any], source: Source, family: _Family, release: ReleaseProfile) -> dict[str, Any] | None:
    spec = _obj(vm.get("spec")) if isinstance(vm, dict) else {}
    matcher = spec.get(family.matcher_key)
    if matcher is None:
        return None
    if not isinstance(matcher, dict):
        raise ExpandError("badRequest", f"spec.{family.matcher_key} of the VirtualMachine is not an object")
    namespace = _namespace(vm, source)
    revision = _find_revision(vm, matcher, namespace, source, family)
    if revision is not None:
        return stored_spec(revision, (family.namespaced, family.cluster), release)
    kind = family.resolve_kind(str(matcher.get("kind") or ""))
    name = str(matcher.get("name") or "")
    obj = source.get(kind, name, namespace)
    if obj is None:
        resource = RESOURCES[kind][0]
        raise not_found(f"{resource}.{GROUP}", name)
    found = obj.get("spec") if isinstance(obj, dict) else None
    if found is not None and not isinstance(found, dict):
        raise ExpandError("badRequest", f"spec of {kind} {name!r} is not an object")
    return found or {}


def _namespace(vm: dict[str, Any], source: Source) -> str:
    ns = _obj(vm.get("metadata")).get("namespace")
    if isinstance(ns, str) and ns:
        return ns
    return getattr(source, "default_namespace", None) or "default"


def _find_revision(
    vm: dict[str, Any], matcher: dict[str, Any], namespace: str, source: Source, family: _Family
) -> dict[str, Any] | None:
    revision_name = matcher.get("revisionName")
    if revision_name:
        return _get_revision(source, str(revision_name), namespace)
    ref = _obj(_obj(vm.get("status")).get(family.status_key))
    cr_name = _obj(ref.get("controllerRevisionRef")).get("name")
    if not cr_name:
        return None
    revision = _get_revision(source, str(cr_name), namespace)
    labels = _obj(_obj(revision.get("metadata")).get("labels"))
    if OBJECT_NAME_LABEL in labels and labels[OBJECT_NAME_LABEL] == (matcher.get("name") or ""):
        return revision
    return None


def _get_revision(source: Source, name: str, namespace: str) -> dict[str, Any]:
    revision = source.get_revision(name, namespace)
    if revision is None:
        raise not_found("controllerrevisions.apps", name)
    return revision
