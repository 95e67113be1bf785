"""From the volume an `inferFromVolume` names to the labels that name the defaults (upstream
`pkg/instancetype/infer/volume.go`), through a Source.

The chains, in upstream's order (the first match decides; nothing else is tried after it):
- `persistentVolumeClaim` volume -> the PVC `claimName` in the VM's namespace;
- `dataVolume` volume -> the VM's `spec.dataVolumeTemplates` entry of that name (its *spec* only: the
  template's own labels are not read), else the DataVolume in the VM's namespace: its labels, else its
  spec; a DataVolume that does not exist -> the PVC of the same name (a garbage-collected DataVolume;
  also when the CDI API is not installed, as upstream's client then gets a 404 NotFound as well);
- a DataVolume spec -> `source.pvc` (the PVC), `source.snapshot` (the VolumeSnapshot), else
  `sourceRef` of kind `DataSource` (namespace from the sourceRef, else the VM's);
- a DataSource -> its labels, else its `source.pvc` or `source.snapshot`.
The VolumeSnapshot steps exist from KubeVirt v1.9 (`releases.INFER_FROM_SNAPSHOTS`; `snapshots=False`
answers as an older release): there a DataVolume spec with only `source.snapshot` is an unsupported source
and a DataSource without labels or `source.pvc` "doesn't provide DataVolumeSourcePVC", both ignorable,
where v1.9 looks the VolumeSnapshot up (a missing one is then a NotFound that `Ignore` does not swallow).
A kind whose API is not installed (Source raises KindNotServed) is an error naming that API, never
ignorable. A `source.pvc` / `source.snapshot` is looked up in the namespace it names: none means the empty
namespace, where nothing exists (upstream's client asks for exactly that).

Only the name label decides: without it the object "has no labels" (a kind label alone does not count);
the kind label is copied as is, empty when absent (the cluster kind).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, TypeGuard

from instancetype_webhook.kubevirt.infer.errors import (
    MISSING_DATA_SOURCE_PVC,
    MISSING_DATA_SOURCE_SOURCE,
    MISSING_LABEL,
    MISSING_VOLUME,
    UNSUPPORTED_DATA_VOLUME_SOURCE,
    UNSUPPORTED_SOURCE_REF_KIND,
    UNSUPPORTED_VOLUME_TYPE,
    InferenceError,
    ignorable,
)
from instancetype_webhook.kubevirt.source import (
    DATA_SOURCE,
    DATA_VOLUME,
    PERSISTENT_VOLUME_CLAIM,
    VOLUME_SNAPSHOT,
    KindNotServed,
    Source,
)

DEFAULT_INSTANCETYPE_LABEL: Final = "instancetype.kubevirt.io/default-instancetype"
DEFAULT_INSTANCETYPE_KIND_LABEL: Final = "instancetype.kubevirt.io/default-instancetype-kind"
DEFAULT_PREFERENCE_LABEL: Final = "instancetype.kubevirt.io/default-preference"
DEFAULT_PREFERENCE_KIND_LABEL: Final = "instancetype.kubevirt.io/default-preference-kind"

# kind -> the resource in Kubernetes' NotFound text (`<resource> "<name>" not found`)
RESOURCES: Final = {
    PERSISTENT_VOLUME_CLAIM: "persistentvolumeclaims",
    DATA_VOLUME: "datavolumes.cdi.kubevirt.io",
    DATA_SOURCE: "datasources.cdi.kubevirt.io",
    VOLUME_SNAPSHOT: "volumesnapshots.snapshot.storage.k8s.io",
}


@dataclass(frozen=True)
class LabelPair:
    """The labels one matcher reads: the default's name and its kind."""

    name: str
    kind: str


INSTANCETYPE_LABELS: Final = LabelPair(DEFAULT_INSTANCETYPE_LABEL, DEFAULT_INSTANCETYPE_KIND_LABEL)
PREFERENCE_LABELS: Final = LabelPair(DEFAULT_PREFERENCE_LABEL, DEFAULT_PREFERENCE_KIND_LABEL)


@dataclass(frozen=True)
class Origin:
    """The object whose labels named the default."""

    kind: str
    namespace: str
    name: str

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "namespace": self.namespace, "name": self.name}


@dataclass(frozen=True)
class Defaults:
    """What the labels say: the matcher's new name and kind ("" = the cluster kind), and where it came from."""

    name: str
    kind: str
    origin: Origin


def _dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _present(value: Any) -> TypeGuard[Mapping[str, Any]]:
    """A Go pointer field that decodes to non-nil: the key holds an object."""
    return isinstance(value, dict)


class VolumeFollower:
    """Follows one VM's volumes to labelled objects for one label pair (a request-scoped helper)."""

    def __init__(self, vm: Mapping[str, Any], namespace: str, source: Source, labels: LabelPair,
                 snapshots: bool = True):
        self.spec = _dict(vm.get("spec"))
        self.namespace = namespace
        self.source = source
        self.labels = labels
        self.snapshots = snapshots  # VolumeSnapshot sources are followed (KubeVirt v1.9 on)

    # -- entry point ----------------------------------------------------------------------------

    def defaults(self, volume_name: str) -> Defaults:
        volumes = _dict(_dict(self.spec.get("template")).get("spec")).get("volumes")
        for volume in volumes if isinstance(volumes, list) else ():
            volume = _dict(volume)
            if _str(volume.get("name")) != volume_name:
                continue
            if _present(volume.get("persistentVolumeClaim")):
                return self._from_pvc(_str(volume["persistentVolumeClaim"].get("claimName")), self.namespace)
            if _present(volume.get("dataVolume")):
                return self._from_data_volume(_str(volume["dataVolume"].get("name")))
            raise ignorable(UNSUPPORTED_VOLUME_TYPE.format(volume=volume_name))
        raise InferenceError(MISSING_VOLUME.format(volume=volume_name))

    # -- objects --------------------------------------------------------------------------------

    def _lookup(self, kind: str, name: str, namespace: str) -> Mapping[str, Any] | None:
        if not namespace:  # the empty namespace holds nothing
            return None
        try:
            return self.source.get(kind, name, namespace)
        except KindNotServed as exc:
            raise InferenceError(f"unable to read {kind} {namespace}/{name} to infer defaults: {exc}") from exc

    def _get(self, kind: str, name: str, namespace: str) -> Mapping[str, Any]:
        obj = self._lookup(kind, name, namespace)
        if obj is None:
            raise InferenceError(f'{RESOURCES[kind]} "{name}" not found')
        return obj

    def _labelled(self, obj: Mapping[str, Any], kind: str) -> Defaults | None:
        """The defaults the object's labels name, or None without the name label."""
        meta = _dict(obj.get("metadata"))
        labels = _dict(meta.get("labels"))
        if self.labels.name not in labels:
            return None
        origin = Origin(kind, _str(meta.get("namespace")), _str(meta.get("name")))
        return Defaults(str(labels[self.labels.name]), str(labels.get(self.labels.kind) or ""), origin)

    def _from_labels(self, obj: Mapping[str, Any], kind: str) -> Defaults:
        found = self._labelled(obj, kind)
        if found is None:
            raise ignorable(MISSING_LABEL.format(label=self.labels.name))
        return found

    def _from_pvc(self, name: str, namespace: str) -> Defaults:
        return self._from_labels(self._get(PERSISTENT_VOLUME_CLAIM, name, namespace), PERSISTENT_VOLUME_CLAIM)

    def _from_snapshot(self, name: str, namespace: str) -> Defaults:
        return self._from_labels(self._get(VOLUME_SNAPSHOT, name, namespace), VOLUME_SNAPSHOT)

    def _from_data_volume(self, name: str) -> Defaults:
        templates = self.spec.get("dataVolumeTemplates")
        for template in templates if isinstance(templates, list) else ():
            template = _dict(template)
            if _str(_dict(template.get("metadata")).get("name")) == name:
                return self._from_data_volume_spec(_dict(template.get("spec")))
        try:
            data_volume = self._lookup(DATA_VOLUME, name, self.namespace)
        except InferenceError:  # no CDI API: upstream's client sees a 404 too (IsNotFound), same fallback
            data_volume = None
        if data_volume is None:  # garbage collected: the PVC of the same name
            return self._from_pvc(name, self.namespace)
        found = self._labelled(data_volume, DATA_VOLUME)
        return found or self._from_data_volume_spec(_dict(data_volume.get("spec")))

    def _from_data_volume_spec(self, spec: Mapping[str, Any]) -> Defaults:
        source = spec.get("source")
        if _present(source):
            if _present(source.get("pvc")):
                return self._from_pvc(_str(source["pvc"].get("name")), _str(source["pvc"].get("namespace")))
            if self.snapshots and _present(source.get("snapshot")):
                snapshot = source["snapshot"]
                return self._from_snapshot(_str(snapshot.get("name")), _str(snapshot.get("namespace")))
        source_ref = spec.get("sourceRef")
        if _present(source_ref):
            kind = _str(source_ref.get("kind"))
            if kind != DATA_SOURCE:
                raise ignorable(UNSUPPORTED_SOURCE_REF_KIND.format(kind=kind))
            namespace = source_ref.get("namespace")
            return self._from_data_source(_str(source_ref.get("name")),
                                          self.namespace if namespace is None else _str(namespace))
        raise ignorable(UNSUPPORTED_DATA_VOLUME_SOURCE)

    def _from_data_source(self, name: str, namespace: str) -> Defaults:
        data_source = self._get(DATA_SOURCE, name, namespace)
        found = self._labelled(data_source, DATA_SOURCE)
        if found is not None:
            return found
        source = _dict(_dict(data_source.get("spec")).get("source"))
        if _present(source.get("pvc")):
            return self._from_pvc(_str(source["pvc"].get("name")), _str(source["pvc"].get("namespace")))
        if not self.snapshots:
            raise ignorable(MISSING_DATA_SOURCE_PVC)
        if _present(source.get("snapshot")):
            return self._from_snapshot(_str(source["snapshot"].get("name")), _str(source["snapshot"].get("namespace")))
        raise ignorable(MISSING_DATA_SOURCE_SOURCE)
