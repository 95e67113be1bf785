"""Reference sources with a live side: `LiveSource`, a stub with a watch cache and a slow live lookup, for the
tests of the review path's offloading (tests/server/test_offload.py, tests/server/test_asgi.py); `RunningSource`
and `start_running`, a source that reads running VMIs, for the live-update decision (tests/admission)."""
from __future__ import annotations

import copy
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from instancetype_webhook.kubevirt.configuration import DEFAULT_SETTINGS, ClusterSettings
from instancetype_webhook.kubevirt.source import CacheMiss, InMemorySource, SourceUnavailable


class LiveSource:
    """Cached names answer at once; anything else needs a (slow) fetch, refused while cache-only."""

    def __init__(self, cached: set[str], fetch_seconds: float = 0.0):
        self.cached, self.fetch_seconds = cached, fetch_seconds
        self.local = threading.local()
        self.fetches = 0

    @contextmanager
    def cache_only(self) -> Iterator[None]:
        self.local.on = True
        try:
            yield
        finally:
            self.local.on = False

    def get(self, name: str) -> str:
        if name in self.cached:
            return name
        if getattr(self.local, "on", False):
            raise CacheMiss(name)
        self.fetches += 1
        threading.Event().wait(self.fetch_seconds)
        return name


class RunningSource(InMemorySource):
    """A reference source that also reads VMIs, as the cluster source does (`get_vmi`), for the live-update
    decision in process: `vmi_gets` counts the reads; `unavailable` (a message) makes each one time out."""

    def __init__(self, objects: Iterable[dict[str, Any]] = (), default_namespace: str = "default"):
        super().__init__(objects, default_namespace)
        self.vmis: dict[tuple[str, str], dict[str, Any]] = {}
        self.vmi_gets = 0
        self.unavailable: str | None = None

    def get_vmi(self, name: str, namespace: str) -> dict[str, Any] | None:
        self.vmi_gets += 1
        if self.unavailable is not None:
            raise SourceUnavailable(f"GET virtualmachineinstances {namespace}/{name}: {self.unavailable}")
        return self.vmis.get((namespace, name))


def start_running(source: RunningSource, vm: dict[str, Any], settings: ClusterSettings = DEFAULT_SETTINGS,
                  uid: str = "uid-1") -> dict[str, Any]:
    """The VM as stored once virt-controller started it (status Running, its revisions and VMI in `source`),
    as tests/fakeapi/running.py start_running leaves it in the fake API server."""
    from instancetype_webhook.kubevirt.liveupdate import start_vm

    vm = copy.deepcopy(vm)
    meta = vm["metadata"]
    meta.setdefault("uid", uid)
    meta.setdefault("generation", 1)
    namespace = meta.get("namespace") or source.default_namespace
    started = start_vm(vm, source, settings)
    for revision in started.source.revisions.values():
        source.add({"kind": "ControllerRevision", **copy.deepcopy(revision)})
    source.add({"kind": "ControllerRevision",
                "metadata": {"name": f"revision-start-vm-{meta['uid']}-{meta['generation']}", "namespace": namespace},
                "data": {"spec": started.start_spec}, "revision": meta["generation"]})
    vm["status"] = {**started.stored_vm.get("status", {}), "printableStatus": "Running", "ready": True,
                    "created": True}
    vmi = copy.deepcopy(started.vmi)
    vmi["metadata"]["annotations"] = {"kubevirt.io/vm-generation": str(meta["generation"])}
    source.vmis[(namespace, meta["name"])] = vmi
    return vm
