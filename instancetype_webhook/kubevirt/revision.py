"""The object stored in a ControllerRevision, decoded as upstream's `pkg/instancetype/compatibility` does.

Upstream decodes `revision.data` with the KubeVirt client scheme's universal deserializer, then accepts
only the two instance type kinds (or the two preference kinds) of `instancetype.kubevirt.io/v1beta1`.
The errors carry Go's texts, which name Go types (`%T`):

- no data (absent or null): `unexpected type in ControllerRevision: <nil>`;
- data that is not a JSON object: the YAML path of the deserializer fails to read apiVersion/kind;
- no kind / no apiVersion, a malformed apiVersion, a kind the scheme does not know (older API
  versions such as `instancetype.kubevirt.io/v1alpha2` are not registered any more):
  `failed to decode object in ControllerRevision: ...` with the apimachinery text;
- a registered type of another kind: `unexpected type in ControllerRevision: *v1.VirtualMachine`.

    stored_spec(revision, kinds) -> the stored object's spec (raises ExpandError badRequest)
"""
from __future__ import annotations

import json
from typing import Any, Final

from instancetype_webhook.kubevirt.causes import ExpandError
from instancetype_webhook.kubevirt.releases import MAIN_PROFILE, ReleaseProfile

__all__ = ["SCHEME_NAME", "go_type_name", "scheme_name", "stored_spec"]


def scheme_name(release: ReleaseProfile = MAIN_PROFILE) -> str:
    """The scheme named in a decode error: the line of client-go's register.go differs per release."""
    return f"kubevirt.io/client-go/kubevirt/scheme/register.go:{release.scheme_register_line}"


SCHEME_NAME: Final = scheme_name()
INSTANCETYPE_GV: Final = "instancetype.kubevirt.io/v1beta1"

_OPTIONS: Final = ("WatchEvent", "ListOptions", "GetOptions", "DeleteOptions", "CreateOptions", "UpdateOptions",
                   "PatchOptions")
_META_GO_PACKAGE: Final = "v1"  # k8s.io/apimachinery/pkg/apis/meta/v1

# group/version -> (Go package name, kinds) registered in KubeVirt's client scheme (client-go/kubevirt/scheme).
_SCHEME: Final[dict[str, tuple[str, tuple[str, ...]]]] = {
    INSTANCETYPE_GV: ("v1beta1", (
        "VirtualMachineInstancetype", "VirtualMachineInstancetypeList",
        "VirtualMachineClusterInstancetype", "VirtualMachineClusterInstancetypeList",
        "VirtualMachinePreference", "VirtualMachinePreferenceList",
        "VirtualMachineClusterPreference", "VirtualMachineClusterPreferenceList")),
    "kubevirt.io/v1": ("v1", (
        "VirtualMachineInstance", "VirtualMachineInstanceList", "VirtualMachineInstanceReplicaSet",
        "VirtualMachineInstanceReplicaSetList", "VirtualMachineInstancePreset", "VirtualMachineInstancePresetList",
        "VirtualMachineInstanceMigration", "VirtualMachineInstanceMigrationList", "VirtualMachine",
        "VirtualMachineList", "KubeVirt", "KubeVirtList")),
    "backup.kubevirt.io/v1alpha1": ("v1alpha1", (
        "VirtualMachineBackup", "VirtualMachineBackupList", "VirtualMachineBackupTracker",
        "VirtualMachineBackupTrackerList")),
    "clone.kubevirt.io/v1alpha1": ("v1alpha1", ("VirtualMachineClone", "VirtualMachineCloneList")),
    "clone.kubevirt.io/v1beta1": ("v1beta1", ("VirtualMachineClone", "VirtualMachineCloneList")),
    "export.kubevirt.io/v1": ("v1", ("VirtualMachineExport", "VirtualMachineExportList")),
    "export.kubevirt.io/v1beta1": ("v1beta1", ("VirtualMachineExport", "VirtualMachineExportList")),
    "migrations.kubevirt.io/v1alpha1": ("v1alpha1", ("MigrationPolicy", "MigrationPolicyList")),
    "plugin.kubevirt.io/v1alpha1": ("v1alpha1", ("Plugin", "PluginList")),
    "pool.kubevirt.io/v1alpha1": ("v1alpha1", ("VirtualMachinePool", "VirtualMachinePoolList")),
    "pool.kubevirt.io/v1beta1": ("v1beta1", ("VirtualMachinePool", "VirtualMachinePoolList")),
    "snapshot.kubevirt.io/v1alpha1": ("v1alpha1", (
        "VirtualMachineSnapshot", "VirtualMachineSnapshotList", "VirtualMachineSnapshotContent",
        "VirtualMachineSnapshotContentList", "VirtualMachineRestore", "VirtualMachineRestoreList")),
    "snapshot.kubevirt.io/v1beta1": ("v1beta1", (
        "VirtualMachineSnapshot", "VirtualMachineSnapshotList", "VirtualMachineSnapshotContent",
        "VirtualMachineSnapshotContentList", "VirtualMachineRestore", "VirtualMachineRestoreList")),
}
# metav1 types every group version gets (metav1.AddToGroupVersion), and the unversioned ones of "v1".
_META_KINDS: Final = frozenset(_OPTIONS)
_UNVERSIONED: Final = frozenset({"Status", "APIVersions", "APIGroupList", "APIGroup", "APIResourceList", *_OPTIONS})

_FIND_KIND_TYPE: Final = ('struct { APIVersion string "json:\\"apiVersion,omitempty\\""; '
                          'Kind string "json:\\"kind,omitempty\\"" }')
_JSON_TYPES: Final = {dict: "object", list: "array", str: "string", bool: "bool", int: "number", float: "number"}


def _fail(message: str) -> ExpandError:
    return ExpandError("badRequest", message)


def _decode_error(message: str) -> ExpandError:
    return _fail(f"failed to decode object in ControllerRevision: {message}")


def _raw(data: Any) -> str:
    """The data as the raw JSON bytes Go keeps in a RawExtension (compact, keys in their order)."""
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


def _group_version(api_version: str) -> tuple[str, str]:
    """schema.ParseGroupVersion: "" -> ("", ""), "v1" -> ("", "v1"), "g/v" -> ("g", "v")."""
    if not api_version:
        return "", ""
    parts = api_version.split("/")
    if len(parts) == 1:
        return "", api_version
    if len(parts) == 2:
        return parts[0], parts[1]
    raise _decode_error(f"unexpected GroupVersion string: {api_version}")


def go_type_name(group: str, version: str, kind: str) -> str | None:
    """`%T` of the Go object the scheme decodes (group, version, kind) into, or None when not registered."""
    gv = f"{group}/{version}" if group else version
    registered = _SCHEME.get(gv)
    if registered is not None and kind in registered[1]:
        return f"*{registered[0]}.{kind}"
    if (registered is not None and kind in _META_KINDS) or (gv == "v1" and kind in _UNVERSIONED):
        return f"*{_META_GO_PACKAGE}.{kind}"
    return None


def _check_type(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        field = "apiVersion" if key == "apiVersion" else "kind"
        raise _decode_error(f"couldn't get version/kind; json parse error: json: cannot unmarshal "
                            f"{_JSON_TYPES.get(type(value), 'object')} into Go struct field .{field} of type string")
    return value


def decoded_type(data: Any, release: ReleaseProfile = MAIN_PROFILE) -> tuple[str, dict[str, Any] | None]:
    """(`%T` of what upstream decodes `data` into, the object) or raises the decode error."""
    if data is None:
        return "<nil>", None
    if not isinstance(data, dict):
        kind = _JSON_TYPES.get(type(data), "object")
        raise _decode_error(f"couldn't get version/kind; json parse error: json: cannot unmarshal {kind} "
                            f"into Go value of type {_FIND_KIND_TYPE}")
    api_version, kind = _check_type(data, "apiVersion"), _check_type(data, "kind")
    group, version = _group_version(api_version)
    if not kind:
        raise _decode_error(f"Object 'Kind' is missing in '{_raw(data)}'")
    if not version:
        raise _decode_error(f"Object 'apiVersion' is missing in '{_raw(data)}'")
    type_name = go_type_name(group, version, kind)
    if type_name is None:
        gv = f"{group}/{version}" if group else version
        raise _decode_error(f'no kind "{kind}" is registered for version "{gv}" in scheme "{scheme_name(release)}"')
    return type_name, data


def stored_spec(revision: dict[str, Any], kinds: tuple[str, str],
                release: ReleaseProfile = MAIN_PROFILE) -> dict[str, Any]:
    """The spec of the object stored in `revision`, which must be one of `kinds` in v1beta1."""
    data = revision.get("data") if isinstance(revision, dict) else None
    type_name, obj = decoded_type(data, release)
    if obj is None or obj.get("apiVersion") != INSTANCETYPE_GV or obj.get("kind") not in kinds:
        raise _fail(f"unexpected type in ControllerRevision: {type_name}")
    spec = obj.get("spec")
    if spec is not None and not isinstance(spec, dict):
        raise _decode_error(f"json: cannot unmarshal {_JSON_TYPES.get(type(spec), 'object')} into Go struct field "
                            f"{obj['kind']}.spec of type v1beta1.{_spec_type(obj['kind'])}")
    return spec or {}


def _spec_type(kind: str) -> str:
    return "VirtualMachinePreferenceSpec" if "Preference" in kind else "VirtualMachineInstancetypeSpec"
