"""A case's `input` as the library takes it: the reference objects, the cluster settings, the VM.

The runner answers every case as one KubeVirt release (`answering_as`; main unless told): the settings
carry its profile, and the inputs (not the cluster's own objects) are pruned to its schema first.
"""
from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from instancetype_webhook.kubevirt.causes import Verdict
from instancetype_webhook.kubevirt.configuration import ClusterSettings, settings_from_configuration
from instancetype_webhook.kubevirt.mutator import Mutation, mutate_vm
from instancetype_webhook.kubevirt.prune import prune_object, prune_to_release
from instancetype_webhook.kubevirt.releases import MAIN_PROFILE, ReleaseProfile
from instancetype_webhook.kubevirt.source import (
    CLUSTER_INSTANCETYPE,
    CLUSTER_PREFERENCE,
    CONTROLLER_REVISION,
    DATA_SOURCE,
    DATA_VOLUME,
    INSTANCETYPE,
    PERSISTENT_VOLUME_CLAIM,
    PREFERENCE,
    VOLUME_SNAPSHOT,
    InMemorySource,
)

# Every list of objects a case's `input` may hold, and the kind of its objects.
INPUT_KINDS = {
    "instancetypes": INSTANCETYPE,
    "clusterInstancetypes": CLUSTER_INSTANCETYPE,
    "preferences": PREFERENCE,
    "clusterPreferences": CLUSTER_PREFERENCE,
    "controllerRevisions": CONTROLLER_REVISION,
    # what inferFromVolume reads
    "persistentVolumeClaims": PERSISTENT_VOLUME_CLAIM,
    "dataVolumes": DATA_VOLUME,
    "dataSources": DATA_SOURCE,
    "volumeSnapshots": VOLUME_SNAPSHOT,
}


_RELEASE: ContextVar[ReleaseProfile] = ContextVar("conformance_release", default=MAIN_PROFILE)


@contextmanager
def answering_as(release: ReleaseProfile) -> Iterator[ReleaseProfile]:
    """Answer the cases checked inside the block as `release`."""
    token = _RELEASE.set(release)
    try:
        yield release
    finally:
        _RELEASE.reset(token)


def case_release() -> ReleaseProfile:
    return _RELEASE.get()


def as_release(obj: Any) -> Any:
    """An input object as the release's API server stores it (a ControllerRevision's `data` too)."""
    return prune_object(obj, _RELEASE.get())


def case_namespace(case_input: Mapping[str, Any]) -> str:
    vm = case_input.get("vm") or {}
    return case_input.get("namespace") or (vm.get("metadata") or {}).get("namespace") or "default"


def case_source(case_input: dict[str, Any]) -> InMemorySource:
    """An in-memory source holding exactly the objects a case lists (kinds defaulted from the list they are in)."""
    source = InMemorySource(default_namespace=case_namespace(case_input))
    for key, kind in INPUT_KINDS.items():
        for obj in case_input.get(key) or []:
            source.add(as_release({**obj, "kind": obj.get("kind") or kind}))
    return source


def case_settings(case_input: dict[str, Any]) -> ClusterSettings:
    """Cluster settings for a case, as the release answered as: its defaults unless the case gives
    `kubevirtConfiguration`."""
    return settings_from_configuration(case_input.get("kubevirtConfiguration"), release=_RELEASE.get())


def _with_namespace(vm: Any, namespace: str | None) -> dict[str, Any]:
    copied: dict[str, Any] = json.loads(json.dumps(vm))  # a deep copy of the case's VM (an object)
    copied = prune_to_release(copied, "vm", _RELEASE.get())
    if namespace and isinstance(copied, dict) and not (copied.get("metadata") or {}).get("namespace"):
        copied.setdefault("metadata", {})["namespace"] = namespace
    return copied


def case_vm(case: dict[str, Any]) -> dict[str, Any]:
    """A copy of `input.vm` (in `input.namespace` when it names none)."""
    return _with_namespace(case["input"]["vm"], case["input"].get("namespace"))


def case_old_vm(case: dict[str, Any]) -> dict[str, Any] | None:
    """The stored VM of an UPDATE (`input.oldVm` when `input.operation` is UPDATE), else None (a CREATE)."""
    case_input = case["input"]
    if case_input.get("operation") != "UPDATE" or case_input.get("oldVm") is None:
        return None
    return _with_namespace(case_input["oldVm"], case_input.get("namespace"))


def goes_through_mutator(case: dict[str, Any]) -> bool:
    """Whether upstream's answers in the case start from the VM mutating webhook (README: expectedInfer/Mutate)."""
    return "expectedInfer" in case or "expectedMutate" in case


def case_mutation(case: dict[str, Any]) -> Mutation:
    """The VM mutating webhook's instancetype stage on the case's request."""
    return mutate_vm(case_vm(case), case_old_vm(case), case_source(case["input"]), case_settings(case["input"]))


def subject_vm(case: dict[str, Any]) -> dict[str, Any] | Verdict:
    """The VM that expansion and validation see, or the mutator's denial."""
    if not goes_through_mutator(case):
        return case_vm(case)
    mutation = case_mutation(case)
    return mutation.verdict if mutation.vm is None else mutation.vm
