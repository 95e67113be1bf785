"""A thin VirtualMachine client over the official `kubernetes` client's connection pool and auth.

Only what audit and sweep need: LIST with paging (`limit`/`continue`), GET, and PUT with the stored
`metadata.resourceVersion` as a precondition (optionally `dryRun=All`). Bodies are encoded and decoded
with orjson and kept as plain dicts, so fields this client does not know survive a read-write cycle.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import orjson
from kubernetes import client as k8s
from kubernetes import config as k8s_config

VMS = "/apis/kubevirt.io/v1"


class KubeError(RuntimeError):
    """The API server answered with an error Status (or could not be reached: status 0)."""

    def __init__(self, status: int, reason: str, message: str):
        super().__init__(f"HTTP {status} {reason}: {message}" if status else message)
        self.status, self.reason, self.message = status, reason, message


class Conflict(KubeError):
    """409: the VM changed since it was read (the resourceVersion precondition failed)."""


class Expired(KubeError):
    """410: a LIST continue token is too old; the list has to start again."""


@dataclass
class Page:
    items: list[dict[str, Any]]
    resource_version: str
    next: str | None
    remaining: int | None = None


class VMClient:
    def __init__(self, api: k8s.ApiClient, page_size: int = 500, timeout: float = 30.0):
        self.api, self.page_size, self.timeout = api, page_size, timeout
        self.host = api.configuration.host.rstrip("/")
        self.requests = 0

    @classmethod
    def from_config(cls, kubeconfig: str | Path | None = None, in_cluster: bool = False,
                    **kw: Any) -> tuple[VMClient, str]:
        """The client and the namespace of the kubeconfig's current context (in-cluster: the pod's)."""
        configuration = k8s.Configuration()
        namespace = "default"
        if in_cluster:
            k8s_config.load_incluster_config(client_configuration=configuration)
            path = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
            namespace = path.read_text().strip() if path.exists() else namespace
        else:
            k8s_config.load_kube_config(config_file=str(kubeconfig) if kubeconfig else None,
                                        client_configuration=configuration)
            try:
                _, current = k8s_config.list_kube_config_contexts(config_file=str(kubeconfig) if kubeconfig else None)
                namespace = (current.get("context") or {}).get("namespace") or namespace
            except Exception:  # noqa: BLE001 (no contexts: keep "default")
                pass
        configuration.retries = 0
        return cls(k8s.ApiClient(configuration), **kw), namespace

    def set_pool_size(self, size: int) -> None:
        """Room for `size` concurrent connections (one per sweep worker)."""
        self.api.configuration.connection_pool_maxsize = size
        self.api.rest_client = k8s.rest.RESTClientObject(self.api.configuration)

    # -- requests -------------------------------------------------------------------------------
    def _headers(self, content_type: str | None) -> dict[str, str]:
        headers = {"Accept": "application/json"}
        if content_type:
            headers["Content-Type"] = content_type
        auth = self.api.configuration.auth_settings().get("BearerToken")
        if auth and auth.get("value"):
            headers[auth["key"]] = auth["value"]
        return headers

    def request(self, method: str, path: str, query: dict[str, Any] | None = None, body: Any = None,
                content_type: str | None = None) -> dict[str, Any]:
        url = self.host + path + ("?" + urlencode(query) if query else "")
        data = orjson.dumps(body) if body is not None else None
        self.requests += 1
        try:
            resp = self.api.rest_client.pool_manager.request(
                method, url, body=data, headers=self._headers(content_type or ("application/json" if data else None)),
                timeout=self.timeout, preload_content=True, retries=False)
        except Exception as exc:  # connection refused, TLS, timeouts
            raise KubeError(0, type(exc).__name__, f"{method} {path}: {exc}") from exc
        try:
            doc = orjson.loads(resp.data) if resp.data else {}
        except orjson.JSONDecodeError:
            doc = {"message": resp.data[:200].decode("utf-8", "replace")}
        if resp.status >= 400:
            error = {409: Conflict, 410: Expired}.get(resp.status, KubeError)
            raise error(resp.status, str(doc.get("reason") or resp.reason), str(doc.get("message") or ""))
        return doc

    @staticmethod
    def path(namespace: str | None, name: str | None = None) -> str:
        base = (f"{VMS}/namespaces/{quote(namespace, safe='')}/virtualmachines" if namespace
                else f"{VMS}/virtualmachines")
        return base + (f"/{quote(name, safe='')}" if name else "")

    def page(self, namespace: str | None, token: str | None = None) -> Page:
        query: dict[str, Any] = {"limit": self.page_size}
        if token:
            query["continue"] = token
        doc = self.request("GET", self.path(namespace), query)
        meta = doc.get("metadata") or {}
        items = [_complete(i) for i in doc.get("items") or [] if isinstance(i, dict)]
        return Page(items, str(meta.get("resourceVersion") or ""), meta.get("continue") or None,
                    meta.get("remainingItemCount"))

    def list(self, namespace: str | None) -> Iterator[dict[str, Any]]:
        """Every VM, page by page (raises Expired when a continue token is too old)."""
        token: str | None = None
        while True:
            page = self.page(namespace, token)
            yield from page.items
            if not page.next:
                return
            token = page.next

    def get(self, namespace: str, name: str) -> dict[str, Any] | None:
        try:
            return _complete(self.request("GET", self.path(namespace, name)))
        except KubeError as exc:
            if exc.status == 404:
                return None
            raise

    def replace(self, vm: dict[str, Any], dry_run: bool = False) -> dict[str, Any]:
        """PUT the VM; its metadata.resourceVersion is the precondition (409 -> Conflict)."""
        meta = vm["metadata"]
        if not meta.get("resourceVersion"):
            raise ValueError("a replace needs the resourceVersion it was read at")
        query = {"dryRun": "All"} if dry_run else None
        return self.request("PUT", self.path(meta.get("namespace"), meta["name"]), query, vm)


def _complete(vm: dict[str, Any]) -> dict[str, Any]:
    """List items carry no kind/apiVersion; a PUT body needs them."""
    if "kind" not in vm:
        vm = {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", **vm}
    return vm
