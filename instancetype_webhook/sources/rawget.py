"""GETs of built-in resources (Namespaces, ControllerRevisions, PVCs) shaped like the generated API
methods, without the generated per-group API classes: importing `CoreV1Api` and `AppsV1Api` costs
about 25 MB of resident memory in the webhook, for three GET paths.

    raw_get(api, "/api/v1/namespaces")(watch=True, resource_version="5", _preload_content=False, ...)

Same contract as the generated methods with `_preload_content=False`: the raw urllib3 response (with
`data`, `stream()`, `release_conn()`), an `ApiException` carrying the status for a non-2xx answer.
Authentication, TLS and proxies come from the ApiClient's configuration and connection pool.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import quote, urlencode

import urllib3
from kubernetes import client as k8s
from kubernetes.client.exceptions import ApiException

# generated keyword -> query parameter
QUERY = {"watch": "watch", "resource_version": "resourceVersion", "allow_watch_bookmarks": "allowWatchBookmarks",
         "timeout_seconds": "timeoutSeconds", "limit": "limit", "_continue": "continue",
         "label_selector": "labelSelector", "field_selector": "fieldSelector"}


def _value(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _timeout(value: Any) -> urllib3.Timeout | None:
    if isinstance(value, tuple):
        return urllib3.Timeout(connect=value[0], read=value[1])
    return urllib3.Timeout(total=value) if value else None


def path_of(*segments: str) -> str:
    """A URL path from its segments, each percent-encoded."""
    return "/" + "/".join(quote(s, safe="") for s in segments)


def raw_get(api: k8s.ApiClient, path: str) -> Callable[..., Any]:
    def call(_preload_content: bool = False, _request_timeout: Any = None, **kw: Any) -> Any:
        query = {QUERY[k]: _value(v) for k, v in kw.items() if v is not None}
        url = api.configuration.host.rstrip("/") + path + ("?" + urlencode(query) if query else "")
        headers = {"Accept": "application/json"}
        auth = api.configuration.auth_settings().get("BearerToken")
        if auth and auth.get("value"):
            headers[auth["key"]] = auth["value"]
        resp = api.rest_client.pool_manager.request("GET", url, headers=headers, timeout=_timeout(_request_timeout),
                                                    preload_content=False, retries=False)
        if not 200 <= resp.status <= 299:
            exc = ApiException(status=resp.status, reason=resp.reason or "")
            exc.body = resp.data.decode("utf-8", "replace")
            resp.release_conn()
            raise exc
        return resp

    return call


class BuiltinReads:
    """The CoreV1Api/AppsV1Api methods the cluster source calls, by the same names and arguments."""

    def __init__(self, api: k8s.ApiClient):
        self.api = api

    def list_namespace(self, **kw: Any) -> Any:
        return raw_get(self.api, "/api/v1/namespaces")(**kw)

    def read_namespaced_persistent_volume_claim(self, name: str, namespace: str, **kw: Any) -> Any:
        return raw_get(self.api, path_of("api", "v1", "namespaces", namespace, "persistentvolumeclaims", name))(**kw)

    def list_controller_revision_for_all_namespaces(self, **kw: Any) -> Any:
        return raw_get(self.api, "/apis/apps/v1/controllerrevisions")(**kw)

    def read_namespaced_controller_revision(self, name: str, namespace: str, **kw: Any) -> Any:
        return raw_get(self.api,
                       path_of("apis", "apps", "v1", "namespaces", namespace, "controllerrevisions", name))(**kw)
