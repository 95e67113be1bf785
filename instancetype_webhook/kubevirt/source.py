"""Where referenced objects come from: the one small interface the core asks, and an in-memory one.

Kinds are always the canonical kind names below; a Source returns the raw object (a dict with
`metadata` and `spec`) or None when it does not exist. Implementations live in `instancetype_webhook.sources`
(YAML catalogue, live cluster cache); the core never knows which.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final, Protocol

from mypy_extensions import mypyc_attr

INSTANCETYPE: Final = "VirtualMachineInstancetype"
CLUSTER_INSTANCETYPE: Final = "VirtualMachineClusterInstancetype"
PREFERENCE: Final = "VirtualMachinePreference"
CLUSTER_PREFERENCE: Final = "VirtualMachineClusterPreference"
CONTROLLER_REVISION: Final = "ControllerRevision"
KINDS: Final[tuple[str, ...]] = (INSTANCETYPE, CLUSTER_INSTANCETYPE, PREFERENCE, CLUSTER_PREFERENCE)
CLUSTER_SCOPED: Final = frozenset({CLUSTER_INSTANCETYPE, CLUSTER_PREFERENCE})

# What `inferFromVolume` reads (all namespaced): core/v1, cdi.kubevirt.io/v1beta1, snapshot.storage.k8s.io/v1.
PERSISTENT_VOLUME_CLAIM: Final = "PersistentVolumeClaim"
DATA_VOLUME: Final = "DataVolume"
DATA_SOURCE: Final = "DataSource"
VOLUME_SNAPSHOT: Final = "VolumeSnapshot"
VOLUME_KINDS: Final[tuple[str, ...]] = (PERSISTENT_VOLUME_CLAIM, DATA_VOLUME, DATA_SOURCE, VOLUME_SNAPSHOT)


class KindNotServed(LookupError):
    """Raised by `Source.get` when the API serving a kind is not installed (e.g. no CDI in the cluster).

    Distinct from "the object does not exist" (None): the message names the missing API.
    """


@mypyc_attr(native_class=False)  # a Python class in the compiled build too (mypyc cannot subclass RuntimeError)
class SourceUnavailable(RuntimeError):
    """The one refusal for "the source cannot answer": a live source (the API server behind it) could not
    answer a lookup in time. Raised by the sources (and the core passes it through); each edge turns it into
    its own answer with one helper: a retryable AdmissionReview refusal (server.asgi), a playground error
    (playground.routes), a failed finding (fleet.finding), a CLI message and exit status 3 (cli.unavailable).
    `reason` is the text every one of them shows."""

    @property
    def reason(self) -> str:
        return f"reference lookup failed: {self}"


class CacheMiss(BaseException):
    """A source answering from its cache only (e.g. `ClusterSource.cache_only()`) was asked for something
    it would have to fetch. A BaseException, so that no `except Exception` on the way turns it into an
    answer: whoever asked for cache-only answers catches it and asks again without the restriction."""


class Source(Protocol):
    def get(self, kind: str, name: str, namespace: str | None = None) -> dict[str, Any] | None:
        """The object of `kind` (canonical) named `name`; `namespace` is ignored for cluster kinds.

        None when it does not exist; KindNotServed when the kind's API is not installed."""

    def get_revision(self, name: str, namespace: str) -> dict[str, Any] | None:
        """The apps/v1 ControllerRevision `name` in `namespace`, or None."""


@mypyc_attr(allow_interpreted_subclasses=True)  # a library user's Source may extend it, compiled build or not
class InMemorySource:
    """A Source over objects held in memory (conformance inputs, CLI files, the bundled catalogue)."""

    def __init__(self, objects: Iterable[dict[str, Any]] = (), default_namespace: str = "default"):
        self._objects: dict[tuple[str, str, str], dict[str, Any]] = {}
        self.default_namespace = default_namespace
        for obj in objects:
            self.add(obj)

    def add(self, obj: dict[str, Any]) -> None:
        kind = obj.get("kind", "")
        meta = obj.get("metadata") or {}
        ns = "" if kind in CLUSTER_SCOPED else (meta.get("namespace") or self.default_namespace)
        self._objects[(kind, ns, meta.get("name", ""))] = obj

    def remove(self, kind: str, name: str, namespace: str | None = None) -> None:
        ns = "" if kind in CLUSTER_SCOPED else (namespace or self.default_namespace)
        self._objects.pop((kind, ns, name), None)

    def get(self, kind: str, name: str, namespace: str | None = None) -> dict[str, Any] | None:
        ns = "" if kind in CLUSTER_SCOPED else (namespace or self.default_namespace)
        return self._objects.get((kind, ns, name))

    def get_revision(self, name: str, namespace: str) -> dict[str, Any] | None:
        return self._objects.get((CONTROLLER_REVISION, namespace, name))

    def objects(self) -> list[dict[str, Any]]:
        return list(self._objects.values())

    def __len__(self) -> int:
        return len(self._objects)
