"""What `inferFromVolume` reads from a live cluster, looked up on demand (never watched):
PersistentVolumeClaims (core/v1), DataVolumes and DataSources (cdi.kubevirt.io/v1beta1) and
VolumeSnapshots (snapshot.storage.k8s.io/v1).

Why on demand: inference reads at most a few objects per VM creation (upstream's virt-api does the same
live GETs), while a cluster can hold tens of thousands of PVCs and DataVolumes; caching them all would
cost memory in every replica for objects that are almost never read (bench/volume_cache_memory.py
measures it) and would need list/watch on every PVC in the cluster. Labels are read as they are now.

A GET answered 404 is either a missing object or a missing API (CDI or the snapshot CRDs not installed).
The API group's discovery document tells them apart (cached for `discovery_ttl` seconds, so installing
CDI later is noticed): a missing API raises `KindNotServed`, which inference turns into an error that
names it. A timeout or another HTTP error is the caller's `fetch` error (SourceUnavailable).
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from kubernetes import client as k8s
from kubernetes.client.exceptions import ApiException

from instancetype_webhook.kubevirt.source import (
    DATA_SOURCE,
    DATA_VOLUME,
    PERSISTENT_VOLUME_CLAIM,
    VOLUME_SNAPSHOT,
    KindNotServed,
)

Fetch = Callable[[Callable[..., Any], str], "dict[str, Any] | None"]


@dataclass(frozen=True)
class VolumeAPI:
    group: str  # "" is the core group
    version: str
    plural: str

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


VOLUME_APIS = {
    PERSISTENT_VOLUME_CLAIM: VolumeAPI("", "v1", "persistentvolumeclaims"),
    DATA_VOLUME: VolumeAPI("cdi.kubevirt.io", "v1beta1", "datavolumes"),
    DATA_SOURCE: VolumeAPI("cdi.kubevirt.io", "v1beta1", "datasources"),
    VOLUME_SNAPSHOT: VolumeAPI("snapshot.storage.k8s.io", "v1", "volumesnapshots"),
}


class VolumeLookup:
    """On-demand GETs of the volume kinds, through `fetch` (the cluster source's bounded GET)."""

    def __init__(self, custom: k8s.CustomObjectsApi, core: Any, fetch: Fetch, lookup_timeout: float,
                 discovery_ttl: float = 30.0):
        self.custom, self.core, self.fetch = custom, core, fetch
        self.lookup_timeout = lookup_timeout
        self.discovery_ttl = discovery_ttl
        self._served: dict[str, tuple[bool, float]] = {}  # "group/version/plural" -> (served, checked at)

    def get(self, kind: str, name: str, namespace: str) -> dict[str, Any] | None:
        api = VOLUME_APIS[kind]
        if api.group:
            call = partial(self.custom.get_namespaced_custom_object, api.group, api.version, namespace, api.plural,
                           name)
        else:
            call = partial(self.core.read_namespaced_persistent_volume_claim, name, namespace)
        obj = self.fetch(call, f"{api.plural} {namespace}/{name}")
        if obj is None:
            if api.group and not self.served(api):
                raise KindNotServed(f"the {api.api_version} API ({api.plural}) is not installed in the cluster")
            return None
        obj.setdefault("kind", kind)
        obj.setdefault("apiVersion", api.api_version)
        return obj

    def served(self, api: VolumeAPI) -> bool:
        """Whether the API server serves `api` (its group's discovery document lists the plural)."""
        key = f"{api.group}/{api.version}/{api.plural}"
        cached = self._served.get(key)
        if cached is not None and time.monotonic() - cached[1] < self.discovery_ttl:
            return cached[0]
        try:
            resources = self.custom.get_api_resources(api.group, api.version,
                                                      _request_timeout=(self.lookup_timeout, self.lookup_timeout))
            served = any(r.name == api.plural for r in (resources.resources or []))
        except ApiException as exc:
            if exc.status != 404:
                return True  # cannot tell (e.g. 403): treat the 404 as a missing object
            served = False
        except Exception:  # noqa: BLE001 (a timeout: the GET itself answered, so the object is what is missing)
            return True
        self._served[key] = (served, time.monotonic())
        return served
