"""A fake Kubernetes API server that speaks the real wire protocol, strict where our code relies on it.

Resources are registered, one line each (`fake.register(group, version, plural, kind, namespaced)`);
`STANDARD` (registered by default) holds what the project reads and writes: the four
instancetype.kubevirt.io kinds, apps/v1 controllerrevisions, kubevirt.io/v1 virtualmachines,
virtualmachineinstances and kubevirts, core/v1 namespaces and persistentvolumeclaims, CDI datavolumes and datasources,
snapshot.storage.k8s.io volumesnapshots. `fake.uninstall(group)` makes a group "not installed": every
path under it is a 404 Status, as on a cluster without that CRD.

Paths: `/api/v1/...` (core) and `/apis/<group>/<version>/...`, cluster-scoped `<plural>[/<name>]` and
namespaced `namespaces/<ns>/<plural>[/<name>[/status]]`; a namespaced plural without a namespace lists
every namespace. `GET /apis/<group>/<version>` is discovery (an APIResourceList).

- LIST: `{"kind": "<Kind>List", "apiVersion", "metadata": {"resourceVersion"[, "continue",
  "remainingItemCount"]}, "items": [...]}`, items without kind/apiVersion, in key order
  (namespace, name) like etcd. Without `resourceVersion` the list is the consistent read from "etcd":
  `limit` pages; the `continue` token serves a consistent snapshot at the first page's resourceVersion;
  after `compact()` an old token is `410 Expired` (the real message); a `resourceVersion` beside a
  `continue` is a 400. With `resourceVersion=0` (any state) or `=N` (not older than N) the list is served
  from the watch cache, from memory, whole in one response (`limit` not honoured, as kube-apiserver's
  cache before 1.33's snapshots); N above the current one is the real `504 Too large resource version`.
  `watch_cache = False` (`--watch-cache=false`) serves those from "etcd" too, paged; `cache_list_errors = N`:
  the next N cached lists answer the real 429 "storage is (re)initializing" of a cache not ready.
  `list_reads` counts what was read: `cache` lists and `etcd` pages.
  `labelSelector` with `k=v`, `k!=v`, `k` and `!k` terms; `fieldSelector` on metadata.name and
  metadata.namespace (any other field is a 400, as for a custom resource).
- WATCH (`?watch=true&resourceVersion=N`): chunked newline-delimited JSON events
  `{"type": ADDED|MODIFIED|DELETED|BOOKMARK|ERROR, "object"}`; every event after N is replayed, then new
  ones stream until `timeoutSeconds`. With `allowWatchBookmarks=true` a BOOKMARK carrying the current
  resourceVersion is sent every `bookmark_interval` seconds of quiet. A resourceVersion older than the
  retained history gets an ERROR event with a 410 Expired Status, as after etcd compaction.
  `mute_watches()` makes every watch, open or new, a half-open connection (a partition, a load balancer
  that dropped its state): a new watch is accepted and gets nothing, not even its headers; an open one
  gets no more events or bookmarks; neither is closed, even past `timeoutSeconds`, until
  `unmute_watches()`, `drop_watches()` or `stop()`.
- Writes: POST (create; 409 AlreadyExists), PUT (replace), PATCH (`application/json-patch+json`,
  `application/merge-patch+json`; `strategic-merge-patch+json` is 415 on custom resources as on a real
  server, and applied as a merge patch on built-in ones), DELETE. Every stored change gets the next
  resourceVersion; `metadata.generation` is 1 on create and goes up when anything but metadata and
  status changes. A `metadata.resourceVersion` in a PUT body or in the patched object is a
  precondition: a stale one is `409 Conflict` with the real message ("the object has been modified;
  please apply your changes to the latest version and try again"). An update that changes nothing is
  not stored (no new resourceVersion), as the real server skips a no-op write. Resources with a status
  subresource (virtualmachines, kubevirts, PVCs, DataVolumes, ...) keep their stored status on a main
  resource write; `/status` writes change only the status.
- Server-side apply: `PATCH` with `application/apply-patch+yaml?fieldManager=M[&force=true]` merges the
  configuration by the CRD's list types, keeps `metadata.managedFields`, answers conflicts with the real 409
  and creates a missing object (tests/fakeapi/apply.py: the structured-merge-diff subset). Other writes
  record an Update entry when they name a `fieldManager` or the object already has managed fields.
- `dryRun=All`: the write is defaulted, admitted (webhooks called with `dryRun: true`) and answered,
  but not stored: no resourceVersion is used up.
- Admission: `fake.admission(mutating_url=..., validating_url=..., ca=..., plurals=...)` sends every
  write of those resources as a v1 AdmissionReview over HTTPS to the webhook (mutating, then
  validating), in the kube-apiserver's order: the mutating webhook sees the object as sent (its status too,
  no uid yet on create), then the registry strategy resets status and system fields, then the validating
  webhook sees what would be stored; applies the returned JSONPatch as the API server does, turns a denial into the real
  `admission webhook "<name>" denied the request: <message>` Status (its code, default 400), and
  returns admission warnings as `Warning: 299 - "<text>"` headers. `fake.reviews` counts the calls.
- CRDs: `fake.install_crd(yaml)` serves a real CustomResourceDefinition; every write of it is pruned and
  validated against its version's schema (tests/fakeapi/schema.py), a violation is a 422 Invalid
  listing the fields. events.k8s.io/v1 Events get the built-in Event validation. A request body over
  3 MiB is a 413; an object over etcd's 1.5 MiB is not stored (500 "etcdserver: request is too large").
- RBAC: `fake.forbid(verb, plural)` answers that verb (create, update, patch, delete, get, list, watch)
  with the real 403 Forbidden Status.
- Test controls: add/update/delete (optionally without telling watchers), compact, drop all watch
  connections, hang GETs, fail the next GETs with 503 (`failing_gets`), count requests
  (`count("PATCH ")`), `writes` (stored changes made through the HTTP API), `on_write` (a hook called before each HTTP
  write is applied, e.g. to make a concurrent edit); stop (every open connection closes, as when a real
  server goes down) and start again on the same port.
"""
from __future__ import annotations

import base64
import bisect
import contextlib
import json
import re
import socket
import ssl
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

import httpx
import jsonpatch
import orjson
import yaml

from tests.fakeapi import apply as fake_apply
from tests.fakeapi.schema import Schema, crd_versions, event_errors

GROUP_PATH = "/apis/instancetype.kubevirt.io/v1beta1"
Key = tuple[str, str]  # (namespace or "", name)


@dataclass(frozen=True)
class Resource:
    group: str  # "" is the core group
    version: str
    plural: str
    kind: str
    namespaced: bool
    status: bool = False  # has a status subresource
    builtin: bool = False  # served by the kube-apiserver itself (strategic merge patch allowed)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def prefix(self) -> str:
        return f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"

    @property
    def qualified(self) -> str:  # "virtualmachines.kubevirt.io", as in real error messages
        return f"{self.plural}.{self.group}" if self.group else self.plural


STANDARD: tuple[Resource, ...] = (
    Resource("instancetype.kubevirt.io", "v1beta1", "virtualmachineinstancetypes", "VirtualMachineInstancetype", True),
    Resource("instancetype.kubevirt.io", "v1beta1", "virtualmachineclusterinstancetypes",
             "VirtualMachineClusterInstancetype", False),
    Resource("instancetype.kubevirt.io", "v1beta1", "virtualmachinepreferences", "VirtualMachinePreference", True),
    Resource("instancetype.kubevirt.io", "v1beta1", "virtualmachineclusterpreferences",
             "VirtualMachineClusterPreference", False),
    Resource("apps", "v1", "controllerrevisions", "ControllerRevision", True, builtin=True),
    Resource("kubevirt.io", "v1", "virtualmachines", "VirtualMachine", True, status=True),
    Resource("kubevirt.io", "v1", "virtualmachineinstances", "VirtualMachineInstance", True, status=True),
    Resource("kubevirt.io", "v1", "kubevirts", "KubeVirt", True, status=True),
    Resource("", "v1", "namespaces", "Namespace", False, status=True, builtin=True),
    Resource("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", True, status=True, builtin=True),
    Resource("cdi.kubevirt.io", "v1beta1", "datavolumes", "DataVolume", True, status=True),
    Resource("cdi.kubevirt.io", "v1beta1", "datasources", "DataSource", True, status=True),
    Resource("snapshot.storage.k8s.io", "v1", "volumesnapshots", "VolumeSnapshot", True, status=True),
    Resource("events.k8s.io", "v1", "events", "Event", True, builtin=True),
)
MAX_REQUEST_BYTES = 3 * 1024 * 1024  # kube-apiserver's request body limit (413 above it)
MAX_OBJECT_BYTES = 1536 * 1024  # etcd's default --max-request-bytes: a larger object is not stored
VERBS = {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete", "GET": "get", "LIST": "list",
         "WATCH": "watch"}
PLURAL_KIND = {r.plural: (r.kind, r.namespaced) for r in STANDARD if r.group == "instancetype.kubevirt.io"}
KIND_PLURAL = {kind: plural for plural, (kind, _) in PLURAL_KIND.items()}

JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"


def status(code: int, reason: str, message: str, details: dict | None = None) -> dict:
    body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": reason, "code": code}
    if details:
        body["details"] = details
    return body


class _Raced(Exception):
    """The object changed between reading it and storing an unconditional patch."""


class APIError(Exception):
    """A request the server answers with a Status."""

    def __init__(self, code: int, reason: str, message: str, details: dict | None = None):
        super().__init__(message)
        self.body = status(code, reason, message, details)
        self.code = code


def _not_found(res: Resource, name: str) -> APIError:
    return APIError(404, "NotFound", f'{res.qualified} "{name}" not found',
                    {"name": name, "group": res.group, "kind": res.plural})


def _conflict(res: Resource, name: str) -> APIError:
    return APIError(409, "Conflict", f'Operation cannot be fulfilled on {res.qualified} "{name}": the object has '
                    "been modified; please apply your changes to the latest version and try again",
                    {"name": name, "group": res.group, "kind": res.plural})


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


def _without(obj: dict, *keys: str) -> dict:
    return {k: v for k, v in obj.items() if k not in keys}


def _copy(obj: Any) -> Any:
    return orjson.loads(orjson.dumps(obj))


def _matches(labels: dict[str, str], selector: str) -> bool:
    for term in filter(None, (t.strip() for t in selector.split(","))):
        if "!=" in term:
            k, v = term.split("!=", 1)
            if labels.get(k.strip()) == v.strip():
                return False
        elif "=" in term:
            k, v = term.replace("==", "=").split("=", 1)
            if labels.get(k.strip()) != v.strip():
                return False
        elif term.startswith("!"):
            if term[1:] in labels:
                return False
        elif term not in labels:
            return False
    return True


FIELDS = ("metadata.name", "metadata.namespace")  # what a custom resource supports


def _checked_fields(selector: str) -> str:
    for term in filter(None, (t.strip() for t in selector.split(","))):
        key = re.split(r"!=|==|=", term, maxsplit=1)[0].strip()
        if key not in FIELDS:
            raise APIError(400, "BadRequest", f'"{key}" is not a known field selector: only "metadata.name", '
                           '"metadata.namespace"')
    return selector


def _field_labels(obj: dict) -> dict[str, str]:
    meta = obj["metadata"]
    return {"metadata.name": meta.get("name", ""), "metadata.namespace": meta.get("namespace", "")}


@dataclass
class Admission:
    """Where writes of `plurals` are sent for admission (the fake's MutatingWebhookConfiguration)."""

    mutating_url: str | None
    validating_url: str | None
    client: httpx.Client
    plurals: frozenset[str]
    name: str = "instancetype-webhook.kubevirt.io"
    failure_policy: str = "Fail"


@dataclass
class _Snapshot:
    rv: int
    items: list[dict]
    created: float = field(default_factory=time.monotonic)


class FakeAPIServer:
    def __init__(self, port: int = 0, start_rv: int = 100, resources: tuple[Resource, ...] = STANDARD,
                 bookmark_interval: float = 1.0):
        self.lock = threading.Condition()
        self.resources: dict[tuple[str, str], Resource] = {}  # (prefix, plural) -> resource
        self.objects: dict[str, dict[Key, dict]] = {}  # plural -> key -> stored object
        self.uninstalled: set[str] = set()
        self.schemas: dict[str, Schema] = {}  # plural -> the served version's CRD schema
        self.forbidden: set[tuple[str, str]] = set()  # (verb, plural) answered 403, as RBAC would
        for res in resources:
            self.register(res.group, res.version, res.plural, res.kind, res.namespaced, res.status, res.builtin)
        self.rv = start_rv
        self.history: dict[str, list[tuple[int, str, dict]]] = {}  # plural -> [(rv, type, object)]
        self.oldest = start_rv  # watches from below this get 410
        self.snapshots: dict[str, _Snapshot] = {}
        self.requests: list[str] = []
        self.writes = 0
        self.reviews = 0
        self.hang_gets = 0.0
        self.failing_gets = 0  # the next N GETs (lists, watches, reads) answer 503, as a server still starting
        self.bookmark_interval = bookmark_interval
        self.muted = False  # mute_watches(): every watch silent and never closed
        self.watch_cache = True  # lists with a resourceVersion are served from memory in one response
        self.cache_list_errors = 0  # the next N cached lists answer 429 (a watch cache not ready yet)
        self.list_reads = {"cache": 0, "etcd": 0}  # cached lists served, and pages read from "etcd"
        self.on_write: Callable[[str, Resource, str, str], None] | None = None  # (verb, res, ns, name)
        self.admission_config: Admission | None = None
        self._request = threading.local()  # this handler thread's write options: (fieldManager, force)
        self.watchers: set[socket.socket] = set()
        self.connections: set[socket.socket] = set()  # every open client connection (keep-alive ones too)
        self.port = port
        self.httpd: ThreadingHTTPServer | None = None
        self.start()

    # -- resources ------------------------------------------------------------------------------
    def register(self, group: str, version: str, plural: str, kind: str, namespaced: bool = True,
                 status: bool = False, builtin: bool = False) -> Resource:
        res = Resource(group, version, plural, kind, namespaced, status, builtin)
        self.resources[(res.prefix, plural)] = res
        self.objects.setdefault(plural, {})
        return res

    def install_crd(self, crd: dict) -> list[Resource]:
        """Serve a CustomResourceDefinition (the real YAML, parsed): every served version, each write pruned
        and validated against that version's schema as kube-apiserver does (tests/fakeapi/schema.py)."""
        spec, out = crd["spec"], []
        names = spec["names"]
        for version, schema in crd_versions(crd):
            out.append(self.register(spec["group"], version, names["plural"], names["kind"],
                                     spec["scope"] == "Namespaced"))
            self.schemas[f"{spec['group']}/{version}/{names['plural']}"] = schema
        self.install(spec["group"])
        return out

    def forbid(self, verb: str, plural: str) -> None:
        """RBAC: `verb` (create, update, patch, delete, get, list, watch) on `plural` is 403 Forbidden."""
        self.forbidden.add((verb, plural))

    def uninstall(self, group: str) -> None:
        """Every path under `group` answers 404, as on a cluster without the CRDs."""
        self.uninstalled.add(group)

    def install(self, group: str) -> None:
        self.uninstalled.discard(group)

    def resource(self, kind_or_plural: str) -> Resource:
        for res in self.resources.values():
            if kind_or_plural in (res.kind, res.plural):
                return res
        raise KeyError(kind_or_plural)

    # -- lifecycle ------------------------------------------------------------------------------
    def start(self) -> None:
        fake = self

        class Handler(_Handler):
            server_fake = fake

        self.httpd = _QuietServer(("127.0.0.1", self.port), Handler)
        self.port = self.httpd.server_address[1]
        self._serving = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                         name=f"fake-apiserver-{self.port}", daemon=True)
        self._serving.start()

    def stop(self) -> None:
        """Stop as a real server goes down: the listener closes and so does every open connection. (Closing
        only the listener left idle keep-alive connections answered by their handler threads, so a client
        with a pooled connection still got answers from a "stopped" server.) Every handler thread is joined."""
        with self.lock:
            httpd, self.httpd = self.httpd, None  # a connection set up from now on is closed at once (setup)
        if httpd:
            httpd.shutdown()
            self._serving.join(5)
            self.drop_watches()
            with self.lock:
                for sock in list(self.connections):
                    with contextlib.suppress(OSError):
                        sock.shutdown(socket.SHUT_RDWR)
            httpd.close_connections()
            httpd.server_close()  # joins the handler threads
        self.drop_watches()
        with self.lock:
            for sock in list(self.connections):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
            self.connections.clear()
        if self.admission_config:
            self.admission_config.client.close()
            self.admission_config = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def kubeconfig_file(self, directory: Path) -> str:
        """Write `kubeconfig()` to DIRECTORY/kubeconfig; its path, for --kubeconfig."""
        path = directory / "kubeconfig"
        path.write_text(self.kubeconfig())
        return str(path)

    def kubeconfig(self) -> str:
        return json.dumps({
            "apiVersion": "v1", "kind": "Config", "current-context": "fake",
            "clusters": [{"name": "fake", "cluster": {"server": self.url}}],
            "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "fake"}}],
            "users": [{"name": "fake", "user": {"token": "fake-token"}}],
        })

    def admission(self, mutating_url: str | None = None, validating_url: str | None = None, ca: str | None = None,
                  plurals: tuple[str, ...] = ("virtualmachines",), failure_policy: str = "Fail") -> None:
        """Send writes of `plurals` to these webhook URLs (HTTPS verified with `ca`), as the API server does."""
        client = httpx.Client(verify=ssl.create_default_context(cafile=ca) if ca else True, timeout=10)
        self.admission_config = Admission(mutating_url, validating_url, client, frozenset(plurals),
                                          failure_policy=failure_policy)

    # -- state changes (test controls: no admission, no preconditions) --------------------------
    def _key(self, res: Resource, obj: dict) -> Key:
        meta = obj["metadata"]
        return (meta.get("namespace", "") if res.namespaced else "", meta["name"])

    def _commit(self, res: Resource, event: str, obj: dict, notify: bool = True) -> dict:
        """Store `obj` (already complete but for its resourceVersion) under the next resourceVersion."""
        with self.lock:
            self.rv += 1
            obj["metadata"]["resourceVersion"] = str(self.rv)
            key = self._key(res, obj)
            if event == "DELETED":
                self.objects[res.plural].pop(key, None)
            else:
                self.objects[res.plural][key] = obj
            if notify:
                self.history.setdefault(res.plural, []).append((self.rv, event, obj))
            else:  # the change happened but watchers miss it: only a relist (or a GET) sees it
                self.oldest = self.rv + 1
            self.lock.notify_all()
            return obj

    def _resource_of(self, obj: dict) -> Resource:
        kind = obj["kind"]
        group = obj.get("apiVersion", "").rpartition("/")[0]
        for res in self.resources.values():
            if res.kind == kind and (res.group == group or not obj.get("apiVersion")):
                return res
        raise KeyError(f"no resource registered for {obj.get('apiVersion')} {kind}")

    def add(self, obj: dict, notify: bool = True) -> dict:
        """Create or replace an object directly (no admission, no precondition)."""
        res = self._resource_of(obj)
        with self.lock:
            obj = _copy(obj)
            meta = obj["metadata"]
            old = self.objects[res.plural].get(self._key(res, obj))
            meta.setdefault("uid", (old or {}).get("metadata", {}).get("uid") or f"uid-{meta['name']}")
            meta.setdefault("creationTimestamp", time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
            meta["generation"] = _generation(old, obj)
            return self._commit(res, "MODIFIED" if old else "ADDED", obj, notify)

    def delete(self, obj: dict, notify: bool = True) -> None:
        res = self._resource_of(obj)
        with self.lock:
            stored = self.objects[res.plural].get(self._key(res, obj))
            self._commit(res, "DELETED", _copy(stored or obj), notify)

    def add_revision(self, rev: dict) -> None:
        self.add({"apiVersion": "apps/v1", "kind": "ControllerRevision", **rev})

    def get(self, kind_or_plural: str, name: str, namespace: str = "") -> dict | None:
        """The stored object (a copy), or None."""
        res = self.resource(kind_or_plural)
        obj = self.objects[res.plural].get((namespace if res.namespaced else "", name))
        return _copy(obj) if obj is not None else None

    def all(self, kind_or_plural: str) -> list[dict]:
        res = self.resource(kind_or_plural)
        return [_copy(o) for _, o in sorted(self.objects[res.plural].items())]

    def compact(self) -> None:
        """Forget the event history and list snapshots: old watches and continue tokens now get 410."""
        with self.lock:
            self.history.clear()
            self.snapshots.clear()
            self.oldest = self.rv + 1

    def drop_watches(self) -> None:
        """Cut every open watch connection (no clean end of stream)."""
        with self.lock:
            for sock in list(self.watchers):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
            self.watchers.clear()
            self.lock.notify_all()

    def mute_watches(self) -> None:
        """Every watch, open or new, goes silent and stays open (see the module docstring)."""
        with self.lock:
            self.muted = True
            self.lock.notify_all()

    def unmute_watches(self) -> None:
        with self.lock:
            self.muted = False
            self.lock.notify_all()

    def count(self, prefix: str) -> int:
        return sum(1 for r in self.requests if r.startswith(prefix))

    # -- the API (called by the handler) --------------------------------------------------------
    def list(self, res: Resource, namespace: str, query: dict[str, str]) -> dict:
        token = query.get("continue")
        limit = int(query.get("limit") or 0)
        version = query.get("resourceVersion") or ""
        if token and version:
            raise APIError(400, "BadRequest", "specifying resource version is not allowed when using continue")
        if version and not version.isdigit():
            raise APIError(400, "BadRequest", f'resourceVersion: Invalid value: "{version}": invalid resource version')
        with self.lock:
            cached = bool(version) and self.watch_cache
            if cached and self.cache_list_errors > 0:
                self.cache_list_errors -= 1
                raise APIError(429, "TooManyRequests", "storage is (re)initializing", {"retryAfterSeconds": 1})
            if cached and int(version) > self.rv:
                raise APIError(504, "Timeout", f"Too large resource version: {version}, current: {self.rv}",
                               {"causes": [{"reason": "ResourceVersionTooLarge",
                                            "message": "Too large resource version"}], "retryAfterSeconds": 1})
            if cached:
                limit = 0  # the watch cache answers the whole list at once
            self.list_reads["cache" if cached else "etcd"] += 1
            if token:
                snap = self.snapshots.get(token.split(":", 1)[0])
                if snap is None:
                    raise APIError(410, "Expired", "The provided continue parameter is too old to display a "
                                   "consistent list result. You can start a new list without the continue "
                                   "parameter, or use the continue token in this response to retrieve the "
                                   "remainder of the results. Continuing with the provided token results in an "
                                   "inconsistent list - objects that were created, modified, or deleted between "
                                   "the time the first chunk was returned and now may show up in the list.")
                snap_id, start = token.split(":", 1)[0], int(token.split(":", 1)[1])
            else:
                items = [o for k, o in sorted(self.objects[res.plural].items()) if not namespace or k[0] == namespace]
                selector = query.get("labelSelector")
                if selector:
                    items = [o for o in items if _matches(o["metadata"].get("labels") or {}, selector)]
                fields = query.get("fieldSelector")
                if fields:
                    items = [o for o in items if _matches(_field_labels(o), _checked_fields(fields))]
                snap, snap_id, start = _Snapshot(self.rv, items), uuid.uuid4().hex, 0
        end = start + limit if limit else len(snap.items)
        meta: dict[str, Any] = {"resourceVersion": str(snap.rv)}
        if end < len(snap.items):
            with self.lock:
                self.snapshots[snap_id] = snap
            meta["continue"] = f"{snap_id}:{end}"
            meta["remainingItemCount"] = len(snap.items) - end
        else:
            with self.lock:
                self.snapshots.pop(snap_id, None)
        items = [_without(o, "kind", "apiVersion") for o in snap.items[start:end]]  # list items carry neither
        return {"kind": f"{res.kind}List", "apiVersion": res.api_version, "metadata": meta, "items": items}

    def authorize(self, verb: str, res: Resource, namespace: str, name: str) -> None:
        action = VERBS[verb]
        if (action, res.plural) not in self.forbidden:
            return
        what = f'{res.qualified} "{name}"' if name else res.qualified
        where = f' in the namespace "{namespace}"' if namespace else " at the cluster scope"
        raise APIError(403, "Forbidden", f'{what} is forbidden: User "system:serviceaccount:fake:fake" cannot '
                       f'{action} resource "{res.plural}" in API group "{res.group}"{where}',
                       {"name": name, "group": res.group, "kind": res.plural})

    def validate(self, res: Resource, obj: dict) -> dict:
        """The object as it would be stored (pruned), or a 422 Invalid listing every violation."""
        schema = self.schemas.get(f"{res.group}/{res.version}/{res.plural}")
        errors: list[str] = []
        if schema is not None:
            obj, errors = schema.admit(obj)
        elif res.plural == "events" and res.group == "events.k8s.io":
            errors = event_errors(obj)
        if errors:
            name = obj["metadata"].get("name", "")
            raise APIError(422, "Invalid", f'{res.kind}.{res.group} "{name}" is invalid: [{", ".join(errors)}]'
                           if len(errors) > 1 else f'{res.kind}.{res.group} "{name}" is invalid: {errors[0]}',
                           {"name": name, "group": res.group, "kind": res.kind,
                            "causes": [{"message": e} for e in errors]})
        if len(orjson.dumps(obj)) > MAX_OBJECT_BYTES:
            raise APIError(500, "InternalError", "etcdserver: request is too large")
        return obj

    def get_one(self, res: Resource, namespace: str, name: str) -> dict:
        obj = self.objects[res.plural].get((namespace, name))
        if obj is None:
            raise _not_found(res, name)
        return obj

    def write(self, verb: str, res: Resource, namespace: str, name: str, sub: str, body: bytes,
              content_type: str, query: dict[str, str]) -> tuple[int, dict, list[str]]:
        """POST/PUT/PATCH/DELETE: (HTTP code, answer, warnings)."""
        dry = query.get("dryRun") == "All"
        if query.get("dryRun") not in (None, "All"):
            raise APIError(400, "BadRequest", f"unsupported dry run value {query['dryRun']!r}")
        if self.on_write and not dry:
            self.on_write(verb, res, namespace, name)
        self._request.options = (query.get("fieldManager"), query.get("force") in ("true", "1"))
        for _ in range(5):
            try:
                return self._write_once(verb, res, namespace, name, sub, body, content_type, dry)
            except _Raced:  # a patch without a precondition is retried on the new object, as the server does
                continue
        raise _conflict(res, name)

    def _write_once(self, verb: str, res: Resource, namespace: str, name: str, sub: str, body: bytes,
                    content_type: str, dry: bool) -> tuple[int, dict, list[str]]:
        with self.lock:
            old = self.objects[res.plural].get((namespace, name)) if name else None
        if verb == "DELETE":
            if old is None:
                raise _not_found(res, name)
            if not dry:
                self._commit(res, "DELETED", _copy(old))
                self.writes += 1
            return 200, {**status(200, "", ""), "status": "Success"}, []
        retry = False
        if verb == "PATCH" and content_type.split(";")[0].strip() == APPLY_PATCH:
            obj, retry = self._applied(res, namespace, name, old, body)
            return self._admit_and_store(res, namespace, name, sub, old, obj, dry, retry, applied=True)
        if verb == "POST":
            obj = self._body(body)
            name = obj["metadata"].get("name") or ""
            if not name:
                raise APIError(422, "Invalid", f'{res.kind}.{res.group} "" is invalid: metadata.name: '
                               "Required value: name or generateName is required")
            with self.lock:
                old = self.objects[res.plural].get((namespace, name))
            if old is not None:
                raise APIError(409, "AlreadyExists", f'{res.qualified} "{name}" already exists',
                               {"name": name, "group": res.group, "kind": res.plural})
        elif old is None:
            raise _not_found(res, name)
        elif verb == "PUT":
            obj = self._body(body)
            if not obj["metadata"].get("resourceVersion") and not res.builtin:
                raise APIError(422, "Invalid", f'{res.kind}.{res.group} "{name}" is invalid: metadata.resourceVersion: '
                               "Invalid value: 0x0: must be specified for an update")
        else:
            obj = self._patched(res, old, body, content_type)
            retry = obj["metadata"].get("resourceVersion") == old["metadata"]["resourceVersion"]
        return self._admit_and_store(res, namespace, name, sub, old, obj, dry, retry)

    def _applied(self, res: Resource, namespace: str, name: str, old: dict | None, body: bytes) -> tuple[dict, bool]:
        """Server-side apply (tests/fakeapi/apply.py): the merged object and whether it is unconditional."""
        manager, force = self._request.options
        if not manager:
            raise APIError(422, "Invalid", 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: '
                           "is required for apply patch")
        try:
            config = yaml.safe_load(body)
        except yaml.YAMLError as exc:
            raise APIError(400, "BadRequest", f"error decoding YAML: {exc}") from exc
        if not isinstance(config, dict) or not isinstance(config.get("metadata") or {}, dict):
            raise APIError(400, "BadRequest", "the object provided is unrecognized")
        if config.get("apiVersion") != res.api_version or config.get("kind") != res.kind:
            raise APIError(400, "BadRequest", f"the apply patch must be a {res.api_version} {res.kind}")
        config.setdefault("metadata", {})
        if (config["metadata"].get("name") or name) != name:
            raise APIError(400, "BadRequest", "the name of the object does not match the name on the URL")
        schema = fake_apply.crd_schema(res.plural, res.group, res.version)
        try:
            obj = fake_apply.apply(_copy(old) if old is not None else None, config, manager, force, schema,
                                   res.api_version)
        except fake_apply.ApplyConflict as exc:
            raise APIError(409, "Conflict", fake_apply.conflict_message(exc.conflicts), {"causes": [
                {"type": "FieldManagerConflict", "message": f'conflict with "{m}" using {v}', "field": f}
                for m, v, f in exc.conflicts]}) from exc
        if old is not None:
            obj["metadata"]["resourceVersion"] = config["metadata"].get("resourceVersion") or \
                old["metadata"]["resourceVersion"]
        retry = old is not None and not config["metadata"].get("resourceVersion")
        return obj, retry

    def _body(self, body: bytes) -> dict:
        try:
            obj = orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            raise APIError(400, "BadRequest", f"the object provided is unrecognized: {exc}") from exc
        if not isinstance(obj, dict) or not isinstance(obj.get("metadata", {}), dict):
            raise APIError(400, "BadRequest", "the object provided is unrecognized")
        obj.setdefault("metadata", {})
        return obj

    def _patched(self, res: Resource, old: dict, body: bytes, content_type: str) -> dict:
        media = content_type.split(";")[0].strip()
        try:
            patch = orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            raise APIError(400, "BadRequest", f"error decoding patch: {exc}") from exc
        if media == JSON_PATCH:
            if not isinstance(patch, list):
                raise APIError(400, "BadRequest", "json: cannot unmarshal object into Go value of type jsonpatch.Patch")
            try:
                return jsonpatch.apply_patch(_copy(old), patch)
            except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as exc:
                raise APIError(422, "Invalid", f"the server rejected our request due to an error in our request: "
                               f"{exc}") from exc
        if media == MERGE_PATCH or (media == STRATEGIC_PATCH and res.builtin):
            if not isinstance(patch, dict):
                raise APIError(400, "BadRequest", "error decoding patch: not a JSON object")
            return merge_patch(_copy(old), patch)
        raise APIError(415, "UnsupportedMediaType", f"the body of the request was in an unknown format - accepted "
                       f"media types include: {JSON_PATCH}, {MERGE_PATCH}, {APPLY_PATCH}")

    def _admit_and_store(self, res: Resource, namespace: str, name: str, sub: str, old: dict | None, obj: dict,
                         dry: bool, retry: bool, applied: bool = False) -> tuple[int, dict, list[str]]:
        meta = obj["metadata"]
        if (meta.get("name") or name) != name or (res.namespaced and meta.get("namespace", namespace) != namespace):
            raise APIError(400, "BadRequest", "the name or namespace of the object does not match the request")
        meta["name"] = name
        if res.namespaced:
            meta["namespace"] = namespace
        obj["kind"], obj["apiVersion"] = res.kind, res.api_version
        stale = old is not None and meta.get("resourceVersion") not in (None, "", old["metadata"]["resourceVersion"])
        if stale:
            raise _conflict(res, name)
        warnings: list[str] = []
        operation = "UPDATE" if old else "CREATE"
        # As the kube-apiserver orders it: mutating admission sees the object as sent (status included, no
        # uid yet on create), then the strategy (PrepareForCreate/Update: status and system fields), then
        # validating admission sees what would be stored.
        if sub != "status":
            obj = self._admit(res, operation, obj, old, dry, warnings, mutating=True)
        obj = self._prepare(res, sub, old, obj)
        obj = self.validate(res, obj)
        if sub != "status" and not applied:
            obj = fake_apply.record_update(old, obj, self._request.options[0], fake_apply.crd_schema(
                res.plural, res.group, res.version), res.api_version)
        if sub != "status":
            obj = self._admit(res, operation, obj, old, dry, warnings, mutating=False)
        obj["metadata"]["generation"] = _generation(old, obj)
        if old is None:
            obj["metadata"].pop("resourceVersion", None)
        else:
            obj["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"]
            if obj == old:  # a no-op update is not stored
                return 200, old, warnings
        if dry:
            return (201 if old is None else 200), obj, warnings
        with self.lock:
            current = self.objects[res.plural].get((namespace, name))
            if old is None and current is not None:
                raise APIError(409, "AlreadyExists", f'{res.qualified} "{name}" already exists',
                               {"name": name, "group": res.group, "kind": res.plural})
            if old is not None and current is not old:  # changed while this write was being admitted
                if retry and current is not None:
                    raise _Raced
                raise _conflict(res, name)
            stored = self._commit(res, "MODIFIED" if old else "ADDED", obj)
            self.writes += 1
        return (201 if old is None else 200), stored, warnings

    @staticmethod
    def _prepare(res: Resource, sub: str, old: dict | None, obj: dict) -> dict:
        """The registry strategy: status only through /status, system fields kept or assigned."""
        obj = {**obj, "metadata": dict(obj["metadata"])}
        if old is not None:
            if res.status:  # the main resource does not write status; the status subresource writes only it
                if sub == "status":
                    obj = {**old, "metadata": dict(old["metadata"]), "status": obj.get("status")}
                else:
                    obj = {**obj, "status": old.get("status")}
                if obj.get("status") is None:
                    obj.pop("status")
            kept = {k: old["metadata"][k] for k in ("uid", "creationTimestamp") if k in old["metadata"]}
            obj["metadata"].update(kept)
        else:
            if res.status and not res.builtin:
                obj.pop("status", None)  # a custom resource's status is written through /status only
            obj["metadata"].update(uid=str(uuid.uuid4()),
                                   creationTimestamp=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
        return obj

    def _admit(self, res: Resource, operation: str, obj: dict, old: dict | None, dry: bool,
               warnings: list[str], mutating: bool) -> dict:
        config = self.admission_config
        if config is None or res.plural not in config.plurals:
            return obj
        url = config.mutating_url if mutating else config.validating_url
        if url:
            request = {
                "uid": str(uuid.uuid4()),
                "kind": {"group": res.group, "version": res.version, "kind": res.kind},
                "resource": {"group": res.group, "version": res.version, "resource": res.plural},
                "requestKind": {"group": res.group, "version": res.version, "kind": res.kind},
                "requestResource": {"group": res.group, "version": res.version, "resource": res.plural},
                "name": obj["metadata"]["name"], "namespace": obj["metadata"].get("namespace", ""),
                "operation": operation, "userInfo": {"username": "system:admin", "groups": ["system:masters"]},
                "object": obj, "oldObject": old, "dryRun": dry,
                "options": {"kind": "CreateOptions" if operation == "CREATE" else "UpdateOptions",
                            "apiVersion": "meta.k8s.io/v1", **({"dryRun": ["All"]} if dry else {})},
            }
            review = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}
            try:
                self.reviews += 1
                resp = config.client.post(url, content=orjson.dumps(review),
                                          headers={"Content-Type": "application/json"})
                resp.raise_for_status()
                answer = resp.json()["response"]
            except Exception as exc:  # noqa: BLE001 (any failure calling the webhook)
                if config.failure_policy == "Ignore":
                    return obj
                raise APIError(500, "InternalError", f'Internal error occurred: failed calling webhook '
                               f'"{config.name}": failed to call webhook: {exc}') from exc
            if answer.get("uid") != request["uid"]:
                raise APIError(500, "InternalError", f'Internal error occurred: failed calling webhook '
                               f'"{config.name}": expected response.uid="{request["uid"]}", got "{answer.get("uid")}"')
            warnings.extend(answer.get("warnings") or [])
            if not answer.get("allowed"):
                st = answer.get("status") or {}
                code = int(st.get("code") or 400)
                raise APIError(code, st.get("reason") or "BadRequest",
                               f'admission webhook "{config.name}" denied the request: {st.get("message", "")}',
                               st.get("details"))
            if mutating and answer.get("patch"):
                if answer.get("patchType") != "JSONPatch":
                    raise APIError(500, "InternalError", f'webhook "{config.name}": unsupported patch type')
                ops = orjson.loads(base64.b64decode(answer["patch"]))
                obj = jsonpatch.apply_patch(obj, ops)
        return obj


def _generation(old: dict | None, new: dict) -> int:
    """1 on create; +1 when anything but metadata and status changed."""
    if old is None:
        return 1
    before = old["metadata"].get("generation", 1)
    changed = _without(old, "metadata", "status", "kind", "apiVersion") != _without(
        new, "metadata", "status", "kind", "apiVersion")
    return before + 1 if changed else before


class _QuietServer(ThreadingHTTPServer):
    """Handler threads are joined by server_close() (block_on_close); close_connections() ends the idle
    keep-alive ones first, so that stopping the server leaves no thread behind."""

    allow_reuse_address = True
    request_queue_size = 128
    daemon_threads = False

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.connections: set[socket.socket] = set()

    def process_request(self, request: Any, client_address: Any) -> None:
        self.connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        self.connections.discard(request)
        super().shutdown_request(request)

    def close_connections(self) -> None:
        for sock in list(self.connections):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # clients that go away (timeouts, dropped watches) are part of the tests


_PATH = re.compile(r"(?P<prefix>/api/v1|/apis/(?P<group>[^/]+)/(?P<version>[^/]+))(?:/(?P<rest>.*))?")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body are separate writes: no 40 ms delayed-ACK stalls
    server_fake: FakeAPIServer

    def log_message(self, *args: Any) -> None:
        pass

    def setup(self) -> None:
        super().setup()
        fake = self.server_fake
        with fake.lock:
            self.stopped = fake.httpd is not self.server  # accepted just before stop(): the server is gone
            if not self.stopped:
                fake.connections.add(self.connection)

    def handle(self) -> None:
        if not self.stopped:
            super().handle()

    def finish(self) -> None:
        with self.server_fake.lock:
            self.server_fake.connections.discard(self.connection)
        with contextlib.suppress(OSError):
            super().finish()

    def _send_json(self, code: int, body: dict, warnings: list[str] = ()) -> None:  # type: ignore[assignment]  # () default: never mutated
        data = orjson.dumps(body)
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for text in warnings:
            self.send_header("Warning", '299 - "{}"'.format(text.replace('"', "'")))
        self.end_headers()
        self.wfile.write(data)

    def _route(self) -> tuple[Resource | None, str, str, str, dict[str, str], str]:
        """(resource, namespace, name, subresource, query, path); resource None for discovery."""
        url = urlparse(self.path)
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        path = url.path.rstrip("/")
        m = _PATH.fullmatch(path)
        fake = self.server_fake
        if not m or (m["group"] and m["group"] in fake.uninstalled):
            raise APIError(404, "NotFound", "the server could not find the requested resource")
        parts = [unquote(p) for p in (m["rest"] or "").split("/")] if m["rest"] else []
        namespace = ""
        if len(parts) >= 3 and parts[0] == "namespaces":
            namespace, parts = parts[1], parts[2:]
        if not parts:
            return None, "", "", "", query, path
        res = fake.resources.get((m["prefix"], parts[0]))
        if res is None or len(parts) > 3 or (namespace and not res.namespaced):
            raise APIError(404, "NotFound", "the server could not find the requested resource")
        name = parts[1] if len(parts) > 1 else ""
        sub = parts[2] if len(parts) > 2 else ""
        if sub and (sub != "status" or not res.status):
            raise APIError(404, "NotFound", "the server could not find the requested resource")
        if name and res.namespaced and not namespace:
            raise APIError(404, "NotFound", "the server could not find the requested resource")
        return res, namespace, name, sub, query, path

    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _serve(self, verb: str) -> None:
        fake = self.server_fake
        body = self._read_body() if verb in ("POST", "PUT", "PATCH", "DELETE") else b""
        try:
            res, namespace, name, sub, query, path = self._route()
            watch = verb == "GET" and query.get("watch") in ("true", "1")
            fake.requests.append(("WATCH " if watch else verb + " ") + path)
            if res is not None:
                fake.authorize("WATCH" if watch else ("LIST" if verb == "GET" and not name else verb), res,
                               namespace, name)
            if len(body) > MAX_REQUEST_BYTES:
                raise APIError(413, "RequestEntityTooLarge", f"Request entity too large: limit is {MAX_REQUEST_BYTES}")
            if res is None:
                if verb != "GET":
                    raise APIError(405, "MethodNotAllowed", "the server does not allow this method")
                return self._send_json(200, self._discovery(path))
            if verb == "GET":
                with fake.lock:
                    failing, fake.failing_gets = fake.failing_gets > 0, max(fake.failing_gets - 1, 0)
                if failing:
                    raise APIError(503, "ServiceUnavailable", "the server is currently unable to handle the request")
                if watch:
                    return self._watch(res, namespace, query)
                if not name:
                    return self._send_json(200, fake.list(res, namespace, query))
                if fake.hang_gets:  # read, then answer late: the answer is the state when it was read
                    try:
                        found: dict | APIError = fake.get_one(res, namespace, name)
                    except APIError as exc:
                        found = exc
                    time.sleep(fake.hang_gets)
                    if isinstance(found, APIError):
                        raise found
                    return self._send_json(200, found)
                return self._send_json(200, fake.get_one(res, namespace, name))
            if (verb == "POST") == bool(name):
                raise APIError(405, "MethodNotAllowed",
                               "the server does not allow this method on the requested resource")
            code, answer, warnings = fake.write(verb, res, namespace, name, sub, body,
                                                self.headers.get("Content-Type") or "", query)
            self._send_json(code, answer, warnings)
        except APIError as exc:
            self._send_json(exc.code, exc.body)

    def _discovery(self, path: str) -> dict:
        fake = self.server_fake
        prefix = path
        resources = [{"name": r.plural, "singularName": r.kind.lower(), "namespaced": r.namespaced, "kind": r.kind,
                      "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"]}
                     for (p, _), r in fake.resources.items() if p == prefix]
        if not resources:
            raise APIError(404, "NotFound", "the server could not find the requested resource")
        group_version = prefix.removeprefix("/apis/").removeprefix("/api/")
        return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": resources}

    def do_GET(self) -> None:  # noqa: N802  (http.server's handler name)
        self._serve("GET")

    def do_POST(self) -> None:  # noqa: N802  (http.server's handler name)
        self._serve("POST")

    def do_PUT(self) -> None:  # noqa: N802  (http.server's handler name)
        self._serve("PUT")

    def do_PATCH(self) -> None:  # noqa: N802  (http.server's handler name)
        self._serve("PATCH")

    def do_DELETE(self) -> None:  # noqa: N802  (http.server's handler name)
        self._serve("DELETE")

    def _chunk(self, event: dict) -> None:
        data = orjson.dumps(event) + b"\n"
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _watch(self, res: Resource, namespace: str, query: dict[str, str]) -> None:
        fake = self.server_fake
        since = int(query.get("resourceVersion") or 0)
        until = time.monotonic() + float(query.get("timeoutSeconds") or 300)
        bookmarks = query.get("allowWatchBookmarks") in ("true", "1")
        with fake.lock:
            if self.connection not in fake.connections:  # stop() closed it while the request was being read
                return
            fake.watchers.add(self.connection)
            while fake.muted:  # accepted, and nothing sent back, not even the headers
                if self.connection not in fake.watchers:
                    return  # dropped
                fake.lock.wait(0.1)
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            if since and since + 1 < fake.oldest:
                self._chunk({"type": "ERROR", "object": status(
                    410, "Expired", f"too old resource version: {since} ({fake.oldest - 1})")})
                self.wfile.write(b"0\r\n\r\n")
                return
            sent, quiet_since = since, time.monotonic()
            while time.monotonic() < until or fake.muted:
                with fake.lock:
                    if self.connection not in fake.watchers:
                        return  # dropped
                    if fake.muted:  # a half-open connection: nothing more, and no end
                        fake.lock.wait(0.1)
                        quiet_since = time.monotonic()
                        continue
                    events = fake.history.get(res.plural, [])
                    pending = [e for e in events[bisect.bisect_right(events, (sent, "\uffff")):]
                               if not namespace or e[2]["metadata"].get("namespace") == namespace]
                    if not pending:  # what a bookmark may claim is read now, with the events: an event
                        current, gap = fake.rv, fake.oldest > sent + 1  # added during the wait is sent next
                        fake.lock.wait(0.1)
                if not pending:
                    # a bookmark never carries a watcher over changes it missed (notify=False, compaction)
                    if bookmarks and not gap and time.monotonic() - quiet_since >= fake.bookmark_interval:
                        self._chunk({"type": "BOOKMARK", "object": {
                            "kind": res.kind, "apiVersion": res.api_version,
                            "metadata": {"resourceVersion": str(max(current, sent))}}})
                        sent, quiet_since = max(current, sent), time.monotonic()
                    continue
                for rv, kind, obj in pending:
                    self._chunk({"type": kind, "object": obj})
                    sent = rv
                quiet_since = time.monotonic()
            self.wfile.write(b"0\r\n\r\n")
        except OSError:
            return
        finally:
            with fake.lock:
                fake.watchers.discard(self.connection)
        self.close_connection = True
