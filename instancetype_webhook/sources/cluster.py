"""A Source over a live cluster: list+watch caches of the four instance type/preference kinds (and
Namespaces, for the policy label), with the official `kubernetes` client.

- One daemon thread per resource lists it (all namespaces), then watches from the list's
  resourceVersion; bookmarks and events advance it. A watch that ends is resumed from the last
  resourceVersion; `410 Gone` (an ERROR event carrying a Status, or an HTTP 410) relists; any
  other failure (dropped connection, server down) retries with exponential backoff.
- The list is client-go's reflector's: the first one asks for `resourceVersion=0` without a limit (served
  in one response from the API server's watch cache, no read from etcd), a relist for the last
  resourceVersion seen (from the cache too, never older than what the informer saw); after a 410, or when
  that list fails (an error, a resourceVersion too large for the cache), the list is the consistent one,
  read from etcd in pages of LIST_PAGE. Either way every object is compacted (sources/compact.py) as it is
  stored.
- A watch that dies without a reset (a half-open connection after a partition, a load balancer that
  dropped its state) is noticed within `watch_idle_timeout` seconds: the watch asks for bookmarks, which
  kube-apiserver sends about every minute on a quiet watch, and reads with that timeout (a quarter above
  the bookmark interval: 75 s by default), so a watch silent that long is presumed dead: out of sync
  (with why), and relisted (only resumed if this watch never had a bookmark: a server that sends none).
  The watch also ends on the server's side after `watch_timeout` seconds, and its sockets have TCP
  keepalive (the kubernetes client's `keep_alive`, client-go's timings).
- `get()` answers from the cache, so nothing remote is on the hot path once synced. On a miss it
  does one live GET bounded by `lookup_timeout` (so "create an instance type, then a VM" works at
  once, before the watch event arrives) and caches what it found. A 404 is a plain miss (None); an
  unreachable API server raises `SourceUnavailable`, which the webhook answers with a reason.
- ControllerRevisions are fetched on demand (`get_revision`), in the VM's namespace only, and cached:
  their data is immutable, but one can be deleted (and recreated under the same name), so a watch of
  controllerrevisions (every namespace, nothing stored: only the events are read) evicts a deleted or
  changed revision, and a relist empties the cache. Without the RBAC to list/watch them, revisions are
  not cached (every lookup is a live GET).
- A VirtualMachineInstance is fetched on demand (`get_vmi`, the live-update warnings), never cached.
- What `inferFromVolume` reads (PVCs, DataVolumes, DataSources, VolumeSnapshots) is fetched on demand
  and not cached (`instancetype_webhook.sources.volumes`: why, and how a missing CDI or snapshot API is told apart).
- The KubeVirt CRs (`kubevirt.io/v1` kubevirts, every namespace, or the one `kubevirt="ns/name"` names)
  are watched too: `configuration` (instancetype_webhook.sources.kubevirt_cr) turns them into the ClusterSettings in
  use after every change. Without the KubeVirt API or the RBAC to read it, KubeVirt's defaults apply.
- An informer is *in sync* once listed and while its watch holds. When the watch breaks (dropped
  connection, API server gone, an error, 410) it is out of sync until it has relisted (or, after a
  single dropped connection that reconnects at once, resumed its watch). Meanwhile the cache is not
  trusted for its kind: `get()` does a live GET (not cached), and when that fails the lookup raises
  `SourceUnavailable` (a retryable refusal), never an answer from the object the cache last saw.
  Namespace policy labels and the KubeVirt configuration keep their last known state (virt-api keeps
  its configuration too). `synced` is true while every informer is in sync; `ready()` stays true until
  one has been out of sync for longer than `stale_after` seconds; `out_of_sync()` gives the seconds
  per resource (what /metrics reports).
- Reconnection follows client-go's reflector: a first delay of 0.8 s, doubled per failure, with jitter,
  capped at `backoff_max`, back to 0.8 s once no failure has been seen for a minute. A successful
  contact with the API server after a silence (another watch, a live GET) wakes the waiting informers,
  so they relist as soon as the API server is back rather than at the end of their delay.
"""
from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from kubernetes import client as k8s
from kubernetes import config as k8s_config
from kubernetes.client.exceptions import ApiException
from urllib3.exceptions import MaxRetryError, ReadTimeoutError

from instancetype_webhook.kubevirt.configuration import DEFAULT_SETTINGS, ClusterSettings
from instancetype_webhook.kubevirt.releases import ReleaseProfile
from instancetype_webhook.kubevirt.source import (
    CLUSTER_INSTANCETYPE,
    CLUSTER_PREFERENCE,
    CLUSTER_SCOPED,
    INSTANCETYPE,
    PREFERENCE,
    CacheMiss,
    SourceUnavailable,
)
from instancetype_webhook.sources.compact import compact
from instancetype_webhook.sources.kubevirt_cr import ClusterConfiguration
from instancetype_webhook.sources.rawget import BuiltinReads
from instancetype_webhook.sources.volumes import VOLUME_APIS, VolumeLookup

log = logging.getLogger("instancetype_webhook.cluster")

GROUP, VERSION = "instancetype.kubevirt.io", "v1beta1"
PLURALS = {
    INSTANCETYPE: "virtualmachineinstancetypes",
    CLUSTER_INSTANCETYPE: "virtualmachineclusterinstancetypes",
    PREFERENCE: "virtualmachinepreferences",
    CLUSTER_PREFERENCE: "virtualmachineclusterpreferences",
}
NAMESPACE = "Namespace"
LIST_PAGE = 500
WATCH_TIMEOUT = 300  # seconds: the server ends a watch after this (timeoutSeconds); it is resumed at once
BOOKMARK_INTERVAL = 60.0  # seconds: kube-apiserver sends a bookmark about every minute on a quiet watch
IDLE_FACTOR = 1.25  # the watch's read timeout is this times the bookmark interval (75 s by default)
KUBEVIRT = "KubeVirt"
KUBEVIRT_GROUP, KUBEVIRT_VERSION, KUBEVIRT_PLURAL = "kubevirt.io", "v1", "kubevirts"
REVISION = "ControllerRevision"
CONTACT_GAP = 1.0  # seconds without an answer from the API server after which an answer wakes the informers
OPTIONAL = (NAMESPACE, KUBEVIRT, REVISION)  # a cluster may lack these (or the RBAC to read them): the informer stops
Key = tuple[str, str]  # (namespace or "", name)


class Gone(Exception):
    """The watch's resourceVersion is too old (410): relist."""


class Silent(Exception):
    """No event, no bookmark and no end of the watch for the read timeout: the connection is presumed dead."""


def _timed_out(exc: BaseException) -> bool:
    """A read timeout from urllib3, raised as is (retries=False) or wrapped (retries=0)."""
    if isinstance(exc, MaxRetryError):
        exc = exc.reason or exc
    return isinstance(exc, ReadTimeoutError)


@dataclass
class Backoff:
    """client-go's reflector backoff: `initial` doubled per failure, times 1 + `jitter` x random, capped at
    `maximum`; back to `initial` once no failure has been seen for `reset_after` seconds."""

    initial: float = 0.8
    maximum: float = 10.0
    reset_after: float = 60.0
    jitter: float = 1.0
    current: float = 0.8
    last_failure: float = float("-inf")

    def reset(self) -> None:
        self.current = self.initial

    def next(self) -> float:
        now = time.monotonic()
        if now - self.last_failure > self.reset_after:
            self.reset()
        self.last_failure = now
        delay, self.current = self.current, min(self.current * 2, self.maximum)
        return min(delay * (1 + self.jitter * random.random()), self.maximum)  # noqa: S311 (not cryptographic)


def _key(obj: dict[str, Any], namespaced: bool) -> Key:
    meta = obj.get("metadata") or {}
    return (meta.get("namespace", "") if namespaced else "", meta.get("name", ""))


class Informer:
    """List+watch of one resource into a dict cache, resumed and relisted as needed, in a thread."""

    def __init__(self, name: str, lister: Callable[..., Any], namespaced: bool, kind: str,
                 stop: threading.Event, watch_timeout: int, backoff: Backoff, on_contact: Callable[[], None],
                 on_change: Callable[[Informer], None] | None = None,
                 on_unavailable: Callable[[str], None] | None = None,
                 on_event: Callable[[str, Key], None] | None = None, keep: bool = True,
                 idle_timeout: float = IDLE_FACTOR * BOOKMARK_INTERVAL):
        self.name, self.lister, self.namespaced, self.kind = name, lister, namespaced, kind
        self.on_change, self.on_unavailable, self.on_event = on_change, on_unavailable, on_event
        self.keep = keep  # False: events only (on_event), nothing stored; the list only gives the resourceVersion
        self.store: dict[Key, dict[str, Any]] = {}
        self.resource_version: str | None = None
        # what the next list asks the API server's cache for: "0" (anything it has) at first, then the last
        # resourceVersion seen (nothing older); "" after a 410: the consistent list, in pages
        self.list_from = "0"
        self.bookmarks = 0  # BOOKMARK events seen: this server sends them, so a silent watch is a dead one
        self.silences = 0  # watches presumed dead (nothing read for idle_timeout seconds)
        self.synced = threading.Event()
        self.disabled = False
        self.relists = 0
        self.deletions = 0  # DELETED events (and relists) seen: a live GET that raced one is not cached
        self._stop, self._watch_timeout, self._backoff, self._contact = stop, watch_timeout, backoff, on_contact
        self.idle_timeout = idle_timeout
        self._response: Any = None
        self._wake = threading.Event()
        self.out_since: float | None = time.monotonic()  # None while in sync: listed, and the watch holds
        self.why = "not listed yet"  # why it is out of sync (the last failure)

    @property
    def in_sync(self) -> bool:
        return self.out_since is None

    def out_of_sync_seconds(self) -> float:
        since = self.out_since
        return 0.0 if since is None else time.monotonic() - since

    def wake(self) -> None:
        """End a reconnection delay now (the API server answers again)."""
        self._wake.set()

    def _in_sync(self) -> None:
        if self.out_since is not None and self.synced.is_set():
            log.info("%s: in sync again after %.1fs", self.name, time.monotonic() - self.out_since)
        self.out_since = None

    def _broken(self, why: str, relist: bool = False) -> None:
        """The watch broke: the cache is out of sync until relisted. A watch that was in sync is resumed
        (from its resourceVersion) if the next attempt gets through; once an attempt failed, the next
        successful one relists."""
        if self.out_since is None:
            self.out_since = time.monotonic()
        elif self.synced.is_set():
            relist = True
        if relist:
            self.resource_version = None
        self.why = why

    def run(self) -> None:
        while not self._stop.is_set():
            try:
                if self.resource_version is None:
                    self._list()
                self._watch()
            except Gone:
                if self._stop.is_set():
                    return
                log.info("%s: resourceVersion %s is gone, relisting", self.name, self.resource_version)
                self._gone()
            except Silent:
                if self._stop.is_set():
                    return
                self._silent()
            except ApiException as exc:
                if self._stop.is_set():
                    return
                if exc.status == 410:
                    self._gone()
                    continue
                if exc.status in (401, 403, 404) and self.kind in OPTIONAL:
                    return self._disable(exc.status)
                self._pause(f"HTTP {exc.status} {exc.reason}")
            except Exception as exc:  # dropped connection, refused, timeout, bad chunk: reconnect later
                if self._stop.is_set():
                    return
                self._pause(f"{type(exc).__name__}: {exc}")

    def _gone(self) -> None:
        self.list_from = ""  # the resourceVersion is unavailable: the next list is the consistent one
        self._broken("resourceVersion gone (410)", relist=True)

    def _silent(self) -> None:
        """Nothing came for idle_timeout seconds on a watch: the connection is presumed dead (a partition, a
        load balancer that forgot it). Out of sync at once, and relisted, unless this informer never had a
        bookmark: then the server may send none, and the watch is only resumed (a dead server fails that)."""
        self.silences += 1
        relist = self.bookmarks > 0
        why = (f"watch silent for {self.idle_timeout:g}s (no event, no bookmark): presumed dead"
               + ("" if relist else "; no bookmark seen yet, resuming"))
        log.warning("%s: %s%s", self.name, why, ", relisting" if relist else "")
        self._broken(why, relist=relist)

    def _disable(self, status: int) -> None:
        why = f"cannot list {self.name} (HTTP {status})"
        if self.on_unavailable is not None:
            self.on_unavailable(why)
        else:
            log.warning("%s; namespace policy labels are off", why)
        self.disabled = True
        self.out_since = None  # nothing to keep in sync
        self.synced.set()

    def _pause(self, why: str) -> None:
        self._broken(why)
        delay = self._backoff.next()
        log.warning("%s: %s; retrying in %.1fs", self.name, why, delay)
        self._wake.clear()
        self._wake.wait(delay)

    def _list(self) -> None:
        """List as client-go's reflector does: from the API server's watch cache first (`resourceVersion=0`, or
        the last one seen, no limit: one response, nothing read from etcd), else (a 410 before, or that list
        failed) the consistent list, read from etcd in pages of LIST_PAGE. Each page (the cached list is one)
        is compacted as it is read."""
        listed = None
        if self.keep and self.list_from:  # `keep=False` wants only a resourceVersion: one item, not them all
            try:
                listed = self._read_list({"resource_version": self.list_from}, "cache")
            except Exception as exc:  # an error Status, a resourceVersion too large, a timeout: the paged list
                if self._stop.is_set():
                    raise
                log.info("%s: the list from the API server's cache (resourceVersion=%s) failed (%s); listing "
                         "from etcd in pages", self.name, self.list_from, _reason(exc))
        if listed is None:
            listed = self._read_list({"limit": LIST_PAGE if self.keep else 1}, "etcd")
        store, count, rv, where = listed
        self.store = store
        self.deletions += 1
        self.resource_version = self.list_from = rv
        self.relists += 1
        if self.on_change is not None:
            self.on_change(self)
        # logged before `synced` is set: whoever waits on it (a test, the readiness probe) may move on at
        # once, and a line written after that could race the end of the waiter's log capture
        log.info("%s: listed %d objects at resourceVersion %s (%s)", self.name, count, rv, where)
        self._in_sync()
        self.synced.set()
        self._contact()

    def _read_list(self, first: dict[str, Any], where: str) -> tuple[dict[Key, dict[str, Any]], int, str, str]:
        """(store, objects listed, resourceVersion, where from) of a list whose first request has `first`; its
        pages (a cached list may be paged too, by a server without a watch cache) follow its continue tokens.
        Each page is compacted before the next is read, so a paged list never sits in memory whole."""
        store: dict[Key, dict[str, Any]] = {}
        kw: dict[str, Any] = first
        count = pages = 0
        while True:
            resp = self.lister(_preload_content=False, _request_timeout=(5, 60), **kw)
            try:
                doc = orjson.loads(resp.data)
            finally:
                resp.release_conn()
            items = doc.get("items") or []
            count, pages = count + len(items), pages + 1
            if self.keep:
                store.update((_key(obj, self.namespaced), self._complete(obj))
                             for obj in items if isinstance(obj, dict))
            meta = doc.get("metadata") or {}
            del doc, items
            token = (meta.get("continue") or None) if self.keep else None
            if not token:
                break
            kw = {"limit": LIST_PAGE, "_continue": token}
        rv = str(meta.get("resourceVersion") or "0")
        return store, count, rv, f"{where}, {pages} page{'s' if pages > 1 else ''}"

    def _complete(self, obj: dict[str, Any]) -> dict[str, Any]:
        obj = compact(obj)
        # List items carry no kind/apiVersion; the core and the provenance annotation want them.
        if self.kind != NAMESPACE and "kind" not in obj:
            group_version = f"{KUBEVIRT_GROUP}/{KUBEVIRT_VERSION}" if self.kind == KUBEVIRT else f"{GROUP}/{VERSION}"
            obj["kind"], obj["apiVersion"] = self.kind, group_version
        return obj

    def _watch(self) -> None:
        # The read timeout bounds the silence between two reads (the answer's headers, then each chunk):
        # a bookmark is due every BOOKMARK_INTERVAL seconds, so one read waiting longer means a dead watch.
        try:
            resp = self.lister(watch=True, resource_version=self.resource_version, allow_watch_bookmarks=True,
                               timeout_seconds=self._watch_timeout, _preload_content=False,
                               _request_timeout=(5, self.idle_timeout))
        except Exception as exc:
            if _timed_out(exc):
                raise Silent from exc
            raise
        self._response = resp
        self._in_sync()  # resumed from the resourceVersion: the events since then come first
        self._contact()
        try:
            if self._stop.is_set():  # stopped while the watch was opening: close() found no response
                return
            for event in _lines(resp):
                self._apply(event)
        except Exception as exc:
            if _timed_out(exc):
                raise Silent from exc
            raise
        finally:
            self._response = None
            resp.release_conn()

    def _apply(self, event: dict[str, Any]) -> None:
        kind, obj = event.get("type"), event.get("object") or {}
        if kind == "ERROR":
            if obj.get("code") == 410:
                raise Gone
            raise ApiException(status=obj.get("code") or 500, reason=obj.get("message") or "watch error")
        rv = (obj.get("metadata") or {}).get("resourceVersion")
        if kind == "BOOKMARK":
            self.bookmarks += 1
        if not self.keep:
            if kind in ("ADDED", "MODIFIED", "DELETED") and self.on_event is not None:
                self.on_event(str(kind), _key(obj, self.namespaced))
        elif kind in ("ADDED", "MODIFIED"):
            self.store[_key(obj, self.namespaced)] = self._complete(obj)
        elif kind == "DELETED":
            self.deletions += 1
            self.store.pop(_key(obj, self.namespaced), None)
        if kind in ("ADDED", "MODIFIED", "DELETED") and self.on_change is not None:
            self.on_change(self)
        if rv:
            self.resource_version = self.list_from = rv
        self._contact()

    def close(self) -> None:
        resp = self._response
        if resp is not None:
            with suppress(Exception):  # best effort on shutdown
                resp.shutdown() if hasattr(resp, "shutdown") else resp.close()


def _reason(exc: BaseException) -> str:
    if isinstance(exc, ApiException):
        return f"HTTP {exc.status} {exc.reason}"
    return f"{type(exc).__name__}: {exc}"


def _lines(resp: Any) -> Iterator[dict[str, Any]]:
    """Watch events from a streamed response: one JSON object per line."""
    buffer = b""
    for chunk in resp.stream(65536, decode_content=True):
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            if line.strip():
                yield orjson.loads(line)
    if buffer.strip():
        yield orjson.loads(buffer)


class ClusterSource:
    """The live-cluster Source (see the module docstring)."""

    remote = True

    def __init__(self, api: k8s.ApiClient, lookup_timeout: float = 2.0, watch_timeout: int = WATCH_TIMEOUT,
                 bookmark_interval: float = BOOKMARK_INTERVAL,
                 backoff_max: float = 10.0, namespaces: bool = True, revision_cache: int = 4096,
                 kubevirt: str | None = None, cluster_fallback: ClusterSettings = DEFAULT_SETTINGS,
                 watch_kubevirt: bool = True, watch_revisions: bool = True, stale_after: float = 60.0,
                 release: ReleaseProfile | None = None):
        self.api = api
        self.lookup_timeout = lookup_timeout
        self.stale_after = stale_after  # ready() turns false once an informer is out of sync this long
        self.custom = k8s.CustomObjectsApi(api)
        # not k8s.CoreV1Api/AppsV1Api: their modules cost ~25 MB of RSS for three GET paths (rawget.py)
        self.core = self.apps = BuiltinReads(api)
        self._stop = threading.Event()
        self.last_contact = 0.0
        self.informers: dict[str, Informer] = {}
        self.watch_idle_timeout = IDLE_FACTOR * bookmark_interval  # a watch silent this long is presumed dead

        def informer(name: str, lister: Callable[..., Any], namespaced: bool, kind: str, **kw: Any) -> Informer:
            return Informer(name, lister, namespaced, kind, self._stop, watch_timeout, Backoff(maximum=backoff_max),
                            self._touch, idle_timeout=self.watch_idle_timeout, **kw)

        for kind, plural in PLURALS.items():
            lister = _bind(self.custom.list_cluster_custom_object, GROUP, VERSION, plural)
            self.informers[kind] = informer(plural, lister, kind not in CLUSTER_SCOPED, kind)
        if namespaces:
            self.informers[NAMESPACE] = informer("namespaces", self.core.list_namespace, False, NAMESPACE)
        self.configuration = ClusterConfiguration(cluster_fallback, kubevirt, release)
        if watch_kubevirt:
            lister = _bind(self.custom.list_cluster_custom_object, KUBEVIRT_GROUP, KUBEVIRT_VERSION, KUBEVIRT_PLURAL)
            self.informers[KUBEVIRT] = informer(
                KUBEVIRT_PLURAL, lister, True, KUBEVIRT,
                on_change=lambda informer: self.configuration.update(list(informer.store.values())),
                on_unavailable=self.configuration.unavailable)
        self._revisions: dict[Key, dict[str, Any]] = {}
        self._revision_cache = revision_cache
        self._revisions_lock = threading.Lock()
        self._revisions_watched = watch_revisions
        if watch_revisions:
            self.informers[REVISION] = informer(
                "controllerrevisions", self.apps.list_controller_revision_for_all_namespaces, True, REVISION,
                on_change=lambda _informer: self._forget_revisions(), on_unavailable=self._revisions_unwatched,
                on_event=self._revision_event, keep=False)
        self._local = threading.local()
        self.volumes = VolumeLookup(self.custom, self.core, self._fetch, lookup_timeout)
        self._threads: list[threading.Thread] = []

    @classmethod
    def from_config(cls, kubeconfig: str | Path | None = None, in_cluster: bool = False, **kw: Any) -> ClusterSource:
        configuration = k8s.Configuration()
        if in_cluster:
            k8s_config.load_incluster_config(client_configuration=configuration)
        else:
            k8s_config.load_kube_config(config_file=str(kubeconfig) if kubeconfig else None,
                                        client_configuration=configuration)
        configuration.retries = 0  # the informers retry with backoff; a lookup must stay within its timeout
        # TCP keepalive on every socket (client-go's timings): a peer that is gone is noticed on an idle watch
        # too. The client's public switch (the installed kubernetes 37 has it); an older one ignores the attribute.
        configuration.keep_alive = True
        return cls(k8s.ApiClient(configuration), **kw)

    def _touch(self) -> None:
        now = time.monotonic()
        silent, self.last_contact = now - self.last_contact > CONTACT_GAP, now
        if silent:  # the API server answers again: the informers waiting to reconnect try now
            for informer in list(self.informers.values()):
                if not informer.in_sync:
                    informer.wake()

    def start(self) -> None:
        for informer in self.informers.values():
            thread = threading.Thread(target=informer.run, name=f"watch-{informer.name}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def stop(self, timeout: float = 10.0) -> None:
        """Stop watching: close the open watches and wait (up to `timeout` seconds) for the threads to end."""
        self._stop.set()
        for informer in self.informers.values():
            informer.wake()
            informer.close()
        deadline = time.monotonic() + timeout
        for thread in self._threads:
            thread.join(max(deadline - time.monotonic(), 0))

    @property
    def synced(self) -> bool:
        """Every informer listed and its watch holding: the cache can be vouched for."""
        return all(i.synced.is_set() and i.in_sync for i in self.informers.values())

    def ready(self) -> bool:
        """Every informer listed, none out of sync for longer than `stale_after` seconds (meanwhile lookups
        of its kind are live GETs)."""
        return all(i.synced.is_set() and i.out_of_sync_seconds() <= self.stale_after
                   for i in self.informers.values())

    def out_of_sync(self) -> dict[str, float]:
        """Seconds each informer has been out of sync (0 while in sync), by resource."""
        return {i.name: round(i.out_of_sync_seconds(), 3) for i in list(self.informers.values())}

    def cache_status(self) -> dict[str, dict[str, Any]]:
        """Per resource: in sync or not, since how long, and why (for logs and readiness details)."""
        return {i.name: {"inSync": i.in_sync, "outOfSyncSeconds": round(i.out_of_sync_seconds(), 3),
                         **({} if i.in_sync else {"reason": i.why})} for i in list(self.informers.values())}

    def wait_synced(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        return all(informer.synced.wait(max(deadline - time.monotonic(), 0)) for informer in self.informers.values())

    # -- Source ---------------------------------------------------------------------------------

    def get(self, kind: str, name: str, namespace: str | None = None) -> dict[str, Any] | None:
        if kind in VOLUME_APIS:  # inferFromVolume: live, on demand
            return self.volumes.get(kind, name, namespace or "default")
        informer = self.informers.get(kind)
        if informer is None or kind in OPTIONAL:
            return None
        key = ("" if kind in CLUSTER_SCOPED else (namespace or "default"), name)
        trusted = informer.in_sync
        obj = informer.store.get(key) if trusted else None
        if obj is not None:
            return obj
        deletions = informer.deletions
        obj = self._live_get(kind, key)  # out of sync: always live, and not cached (the relist will be)
        if obj is None:
            return None
        if not trusted or informer.deletions != deletions:  # deleted (or relisted) meanwhile: may be gone already
            return informer._complete(obj)
        return informer.store.setdefault(key, informer._complete(obj))

    def get_revision(self, name: str, namespace: str) -> dict[str, Any] | None:
        """The ControllerRevision `namespace`/`name` (a revision of one namespace never answers for another)."""
        key = (namespace, name)
        watch = self.informers.get(REVISION)
        trusted = watch is None or watch.in_sync  # a broken revision watch cannot evict: do not trust the cache
        cached = self._revisions.get(key) if trusted else None
        if cached is not None:
            return cached
        with self._revisions_lock:
            epoch = self._revision_epoch
        obj = self._fetch(lambda **kw: self.apps.read_namespaced_controller_revision(name, namespace, **kw),
                          f"controllerrevisions {namespace}/{name}")
        if obj is not None:
            obj.setdefault("kind", "ControllerRevision")
            obj.setdefault("apiVersion", "apps/v1")
            with self._revisions_lock:
                # cached only while the watch can evict it, and only if no event came in during the GET
                if self._revisions_watched and trusted and epoch == self._revision_epoch:
                    if len(self._revisions) >= self._revision_cache:
                        self._revisions.pop(next(iter(self._revisions)))
                    self._revisions[key] = obj
        return obj

    def get_vmi(self, name: str, namespace: str) -> dict[str, Any] | None:
        """The VirtualMachineInstance `namespace/name`: a live GET bounded by `lookup_timeout`, never cached
        (the live-update warnings read the running VMI's current state); None when there is none."""
        call = _bind(self.custom.get_namespaced_custom_object, KUBEVIRT_GROUP, KUBEVIRT_VERSION, namespace,
                     "virtualmachineinstances", name)
        return self._fetch(call, f"virtualmachineinstances {namespace}/{name}")

    _revision_epoch = 0  # bumped by every eviction: a GET that raced one is not cached

    def _revision_event(self, kind: str, key: Key) -> None:
        if kind in ("MODIFIED", "DELETED"):
            with self._revisions_lock:
                self._revision_epoch += 1
                self._revisions.pop(key, None)

    def _forget_revisions(self) -> None:
        with self._revisions_lock:
            self._revision_epoch += 1
            self._revisions.clear()

    def _revisions_unwatched(self, why: str) -> None:
        log.warning("%s; ControllerRevisions are not cached (every lookup is a live GET)", why)
        with self._revisions_lock:
            self._revisions_watched = False
            self._revision_epoch += 1
            self._revisions.clear()

    def namespace_labels(self, namespace: str) -> dict[str, str] | None:
        informer = self.informers.get(NAMESPACE)
        if informer is None:
            return None
        obj = informer.store.get(("", namespace))
        return ((obj or {}).get("metadata") or {}).get("labels") if obj else None

    # -- live lookups ---------------------------------------------------------------------------

    def _live_get(self, kind: str, key: Key) -> dict[str, Any] | None:
        namespace, name = key
        plural = PLURALS[kind]
        if kind in CLUSTER_SCOPED:
            call = _bind(self.custom.get_cluster_custom_object, GROUP, VERSION, plural, name)
        else:
            call = _bind(self.custom.get_namespaced_custom_object, GROUP, VERSION, namespace, plural, name)
        return self._fetch(call, f"{plural} {namespace + '/' if namespace else ''}{name}")

    @contextmanager
    def cache_only(self) -> Iterator[None]:
        """In this block (this thread only) a lookup the caches cannot answer raises CacheMiss instead of
        calling the API server: the webhook answers on the event loop when the caches suffice (nearly
        always once synced) and moves to a worker thread, with the review deadline, only when they do not."""
        self._local.cache_only = True
        try:
            yield
        finally:
            self._local.cache_only = False

    def _fetch(self, call: Callable[..., Any], what: str) -> dict[str, Any] | None:
        # Every remote lookup goes through here (new kinds too), so that cache_only() can refuse it.
        if getattr(self._local, "cache_only", False):
            raise CacheMiss(what)
        try:
            resp = call(_preload_content=False, _request_timeout=(self.lookup_timeout, self.lookup_timeout))
        except ApiException as exc:
            if exc.status == 404:
                self._touch()  # an answer all the same
                return None
            raise SourceUnavailable(f"GET {what}: HTTP {exc.status} {exc.reason}") from exc
        except Exception as exc:  # timeouts, refused connections
            raise SourceUnavailable(f"GET {what}: {type(exc).__name__}") from exc
        try:
            obj = orjson.loads(resp.data)
        finally:
            resp.release_conn()
        self._touch()
        return obj


def _bind(fn: Callable[..., Any], *args: Any) -> Callable[..., Any]:
    return lambda **kw: fn(*args, **kw)
