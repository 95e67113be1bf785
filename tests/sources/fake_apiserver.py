"""A small fake Kubernetes API server that speaks the real list/watch wire protocol.

- LIST: `{"kind": "<Kind>List", "apiVersion", "metadata": {"resourceVersion"}, "items": [...]}`.
- WATCH (`?watch=true&resourceVersion=N`): HTTP/1.1 chunked stream of newline-delimited JSON events
  `{"type": ADDED|MODIFIED|DELETED|BOOKMARK|ERROR, "object": {...}}`; every event after N is replayed,
  then new ones are streamed as they happen, until `timeoutSeconds`.
- A resourceVersion older than the retained history gets an ERROR event whose object is a
  `Status` with code 410 (reason Expired), as the real server does after compaction.
- GET of one object, 404 as a `Status`; ControllerRevisions under apps/v1.
- Test controls: add/update/delete (optionally without telling watchers), compact, drop all watch
  connections, hang GETs, count requests; stop and start again on the same port.
"""
from __future__ import annotations

import copy
import json
import re
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

GROUP_PATH = "/apis/instancetype.kubevirt.io/v1beta1"
PLURAL_KIND = {
    "virtualmachineinstancetypes": ("VirtualMachineInstancetype", True),
    "virtualmachineclusterinstancetypes": ("VirtualMachineClusterInstancetype", False),
    "virtualmachinepreferences": ("VirtualMachinePreference", True),
    "virtualmachineclusterpreferences": ("VirtualMachineClusterPreference", False),
}
KIND_PLURAL = {kind: plural for plural, (kind, _) in PLURAL_KIND.items()}


def status(code: int, reason: str, message: str) -> dict:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": reason, "code": code}


class FakeAPIServer:
    def __init__(self, port: int = 0, start_rv: int = 100):
        self.lock = threading.Condition()
        self.objects: dict[str, dict[tuple[str, str], dict]] = {p: {} for p in [*PLURAL_KIND, "namespaces"]}
        self.revisions: dict[tuple[str, str], dict] = {}
        self.rv = start_rv
        self.history: list[tuple[int, str, str, dict]] = []  # (rv, plural, type, object)
        self.oldest = start_rv  # watches from below this get 410
        self.requests: list[str] = []
        self.hang_gets = 0.0
        self.watchers: set[socket.socket] = set()
        self.port = port
        self.httpd: ThreadingHTTPServer | None = None
        self.start()

    # -- lifecycle ------------------------------------------------------------------------------
    def start(self) -> None:
        fake = self

        class Handler(_Handler):
            server_fake = fake

        self.httpd = _QuietServer(("127.0.0.1", self.port), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def stop(self) -> None:
        if self.httpd:
            self.httpd.shutdown()
            self.httpd.server_close()
            self.httpd = None
        self.drop_watches()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def kubeconfig(self) -> str:
        return json.dumps({
            "apiVersion": "v1", "kind": "Config", "current-context": "fake",
            "clusters": [{"name": "fake", "cluster": {"server": self.url}}],
            "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "fake"}}],
            "users": [{"name": "fake", "user": {"token": "fake-token"}}],
        })

    # -- state changes --------------------------------------------------------------------------
    def _store_key(self, plural: str, obj: dict) -> tuple[str, str]:
        namespaced = PLURAL_KIND.get(plural, ("", False))[1]
        meta = obj["metadata"]
        return (meta.get("namespace", "") if namespaced else "", meta["name"])

    def _record(self, plural: str, kind: str, obj: dict, notify: bool) -> dict:
        with self.lock:
            self.rv += 1
            obj = copy.deepcopy(obj)
            obj["metadata"]["resourceVersion"] = str(self.rv)
            obj["metadata"].setdefault("uid", f"uid-{obj['metadata']['name']}")
            obj["metadata"]["generation"] = obj["metadata"].get("generation", 0) + (kind != "DELETED")
            if kind == "DELETED":
                self.objects[plural].pop(self._store_key(plural, obj), None)
            else:
                self.objects[plural][self._store_key(plural, obj)] = obj
            if notify:
                self.history.append((self.rv, plural, kind, obj))
            else:  # the change happened but watchers miss it: only a relist (or a GET) sees it
                self.oldest = self.rv + 1
            self.lock.notify_all()
            return obj

    def add(self, obj: dict, notify: bool = True) -> dict:
        plural = "namespaces" if obj["kind"] == "Namespace" else KIND_PLURAL[obj["kind"]]
        exists = self._store_key(plural, obj) in self.objects[plural]
        return self._record(plural, "MODIFIED" if exists else "ADDED", obj, notify)

    def delete(self, obj: dict, notify: bool = True) -> None:
        self._record(KIND_PLURAL[obj["kind"]], "DELETED", obj, notify)

    def add_revision(self, rev: dict) -> None:
        self.revisions[(rev["metadata"]["namespace"], rev["metadata"]["name"])] = rev

    def compact(self) -> None:
        """Forget the event history: watches from an older resourceVersion now get 410 Gone."""
        with self.lock:
            self.history.clear()
            self.oldest = self.rv + 1

    def drop_watches(self) -> None:
        """Cut every open watch connection (no clean end of stream)."""
        with self.lock:
            for sock in list(self.watchers):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            self.watchers.clear()
            self.lock.notify_all()

    def count(self, prefix: str) -> int:
        return sum(1 for r in self.requests if r.startswith(prefix))


class _QuietServer(ThreadingHTTPServer):
    allow_reuse_address = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # clients that go away (timeouts, dropped watches) are part of the tests


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_fake: FakeAPIServer

    def log_message(self, *args: Any) -> None:
        pass

    def _send_json(self, code: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802
        fake = self.server_fake
        url = urlparse(self.path)
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        watch = query.get("watch") in ("true", "1")
        fake.requests.append(("WATCH " if watch else "GET ") + url.path)
        path = url.path
        m = re.fullmatch(r"/apis/apps/v1/namespaces/([^/]+)/controllerrevisions/([^/]+)", path)
        if m:
            return self._get_one(fake.revisions.get((m[1], m[2])), f'controllerrevisions.apps "{m[2]}" not found')
        m = re.fullmatch(GROUP_PATH + r"/namespaces/([^/]+)/([^/]+)/([^/]+)", path)
        if m and m[2] in PLURAL_KIND:
            return self._get_one(fake.objects[m[2]].get((m[1], m[3])),
                                 f'{m[2]}.instancetype.kubevirt.io "{m[3]}" not found')
        m = re.fullmatch(GROUP_PATH + r"/([^/]+)(?:/([^/]+))?", path)
        if m and m[1] in PLURAL_KIND:
            if m[2]:
                return self._get_one(fake.objects[m[1]].get(("", m[2])),
                                     f'{m[1]}.instancetype.kubevirt.io "{m[2]}" not found')
            return self._watch(m[1], query) if watch else self._list(m[1], PLURAL_KIND[m[1]][0])
        if path == "/api/v1/namespaces":
            return self._watch("namespaces", query) if watch else self._list("namespaces", "Namespace")
        self._send_json(404, status(404, "NotFound", f"the server could not find {path}"))

    def _get_one(self, obj: dict | None, missing: str) -> None:
        if self.server_fake.hang_gets:
            time.sleep(self.server_fake.hang_gets)
        if obj is None:
            return self._send_json(404, status(404, "NotFound", missing))
        self._send_json(200, obj)

    def _list(self, plural: str, kind: str) -> None:
        fake = self.server_fake
        with fake.lock:
            items = [copy.deepcopy(o) for o in fake.objects[plural].values()]
            for item in items:  # real list items carry no kind/apiVersion
                item.pop("kind", None)
                item.pop("apiVersion", None)
            rv = str(fake.rv)
        api_version = "v1" if plural == "namespaces" else "instancetype.kubevirt.io/v1beta1"
        self._send_json(200, {"kind": f"{kind}List", "apiVersion": api_version,
                              "metadata": {"resourceVersion": rv}, "items": items})

    def _chunk(self, event: dict) -> None:
        data = json.dumps(event).encode() + b"\n"
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _watch(self, plural: str, query: dict[str, str]) -> None:
        fake = self.server_fake
        since = int(query.get("resourceVersion") or 0)
        until = time.monotonic() + float(query.get("timeoutSeconds") or 300)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        with fake.lock:
            fake.watchers.add(self.connection)
        try:
            if since and since + 1 < fake.oldest:
                self._chunk({"type": "ERROR", "object": status(
                    410, "Expired", f"too old resource version: {since} ({fake.oldest - 1})")})
                self.wfile.write(b"0\r\n\r\n")
                return
            sent = since
            while time.monotonic() < until:
                with fake.lock:
                    if self.connection not in fake.watchers:
                        return  # dropped
                    pending = [e for e in fake.history if e[0] > sent and e[1] == plural]
                    if not pending:
                        fake.lock.wait(0.1)
                        continue
                for rv, _, kind, obj in pending:
                    self._chunk({"type": kind, "object": obj})
                    sent = rv
            self.wfile.write(b"0\r\n\r\n")
        except OSError:
            return
        finally:
            with fake.lock:
                fake.watchers.discard(self.connection)
        self.close_connection = True
