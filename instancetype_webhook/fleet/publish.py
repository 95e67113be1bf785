"""Write the audit's policy reports to the cluster (the edge of instancetype_webhook.fleet.policyreport).

A run replaces what the previous run wrote: the reports this tool wrote are found again by the label
`app.kubernetes.io/managed-by=instancetype-webhook` (in the namespace audited, or every namespace
with -A); each wanted report is created or replaced (PUT with the resourceVersion read, re-read on a
409), then the ones no longer wanted (a namespace without VMs now, a part a smaller namespace no
longer needs) are deleted. Reports of other producers are never read into the set, and a report
of the same name without the label is left alone (an error naming it).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from instancetype_webhook.fleet.policyreport import MANAGED_BY, SOURCE, ReportAPI
from instancetype_webhook.sources.kube import Conflict, KubeError, VMClient

ATTEMPTS = 4


class ReportError(RuntimeError):
    """The reports cannot be written (API not installed, not allowed, refused)."""


@dataclass
class Published:
    written: list[tuple[dict[str, Any], str]] = field(default_factory=list)  # (report, created|updated)
    deleted: list[tuple[str, str]] = field(default_factory=list)  # (namespace, name)


def _path(api: ReportAPI, namespace: str | None, name: str | None = None) -> str:
    base = f"/apis/{api.group}/{api.version}"
    base += f"/namespaces/{quote(namespace, safe='')}/{api.plural}" if namespace else f"/{api.plural}"
    return base + (f"/{quote(name, safe='')}" if name else "")


def _failed(exc: KubeError, api: ReportAPI, doing: str) -> ReportError:
    if exc.status == 403:
        return ReportError(f"not allowed to {doing} {api.plural}.{api.group} (HTTP 403): {exc.message} "
                           "(the ServiceAccount needs get, list, create, update and delete on them)")
    return ReportError(f"cannot {doing} {api.plural}.{api.group}: {exc}")


def check_api(client: VMClient, api: ReportAPI) -> None:
    """Raise ReportError at once when the API is not served (its CRD is not installed)."""
    try:
        doc = client.request("GET", f"/apis/{api.group}/{api.version}")
    except KubeError as exc:
        if exc.status == 404:
            raise ReportError(f"the {api.kind} API {api.api_version} is not installed on this cluster (no CRD "
                              f"{api.plural}.{api.group}); install it, or pick the other API with --report; "
                              "nothing was written") from None
        raise _failed(exc, api, "discover") from None
    if not any(r.get("name") == api.plural for r in doc.get("resources") or []):
        raise ReportError(f"{api.api_version} does not serve {api.plural}; nothing was written")


def managed(client: VMClient, api: ReportAPI, namespace: str | None) -> dict[tuple[str, str], dict[str, Any]]:
    """The reports this tool wrote before, by (namespace, name)."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    token: str | None = None
    while True:
        query: dict[str, Any] = {"labelSelector": f"{MANAGED_BY}={SOURCE}", "limit": 100}
        if token:
            query["continue"] = token
        try:
            doc = client.request("GET", _path(api, namespace), query)
        except KubeError as exc:
            raise _failed(exc, api, "list") from None
        for item in doc.get("items") or []:
            meta = item.get("metadata") or {}
            found[(str(meta.get("namespace") or ""), str(meta.get("name") or ""))] = item
        token = (doc.get("metadata") or {}).get("continue") or None
        if not token:
            return found


def _ours(obj: dict[str, Any]) -> bool:
    return ((obj.get("metadata") or {}).get("labels") or {}).get(MANAGED_BY) == SOURCE


def _put(client: VMClient, api: ReportAPI, report: dict[str, Any], current: dict[str, Any] | None) -> str:
    """Create or replace one report; re-read and retry on a conflict."""
    meta = report["metadata"]
    namespace, name = meta["namespace"], meta["name"]
    for _ in range(ATTEMPTS):
        try:
            if current is None:
                client.request("POST", _path(api, namespace), body=report)
                return "created"
            if not _ours(current):
                raise ReportError(f"{api.kind} {namespace}/{name} exists and was not written by {SOURCE} "
                                  f"(no {MANAGED_BY}={SOURCE} label): left alone")
            body = {**report, "metadata": {**meta, "resourceVersion": current["metadata"]["resourceVersion"]}}
            client.request("PUT", _path(api, namespace, name), body=body)
            return "updated"
        except KubeError as exc:
            if not isinstance(exc, Conflict):  # 409 AlreadyExists (created meanwhile) is a Conflict too
                raise _failed(exc, api, "create" if current is None else "update") from None
        try:
            current = client.request("GET", _path(api, namespace, name))
        except KubeError as exc:
            if exc.status != 404:
                raise _failed(exc, api, "read") from None
            current = None
    raise ReportError(f"{api.kind} {namespace}/{name} kept changing: not written after {ATTEMPTS} attempts")


def publish(client: VMClient, api: ReportAPI, reports: list[dict[str, Any]], namespace: str | None) -> Published:
    """Make the reports of `namespace` (None: every namespace) exactly `reports`: new ones first, then the
    stale ones deleted, so a reader never sees a namespace without its report."""
    existing = managed(client, api, namespace)
    done = Published()
    for report in reports:
        key = (report["metadata"]["namespace"], report["metadata"]["name"])
        current = existing.pop(key, None)  # None: create (a same-named report of another producer: 409, then seen)
        done.written.append((report, _put(client, api, report, current)))
    for (ns, name), stale in sorted(existing.items()):
        try:
            client.request("DELETE", _path(api, ns, name),
                           body={"kind": "DeleteOptions", "apiVersion": "v1",
                                 "preconditions": {"uid": stale["metadata"].get("uid")}})
        except KubeError as exc:
            if exc.status != 404:
                raise _failed(exc, api, "delete") from None
        done.deleted.append((ns, name))
    return done


def table(api: ReportAPI, published: Published) -> str:
    """What was written, in `kubectl get policyreport -A`'s columns (and what was removed)."""
    rows = [("NAMESPACE", "NAME", "PASS", "FAIL", "WARN", "ERROR", "SKIP", "CHANGE")]
    for report, how in published.written:
        s, meta = report["summary"], report["metadata"]
        rows.append((meta["namespace"], meta["name"], *(str(s[k]) for k in ("pass", "fail", "warn", "error", "skip")),
                     how))
    rows += [(ns, name, "", "", "", "", "", "deleted") for ns, name in published.deleted]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["   ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return f"{api.kind} ({api.api_version}):\n" + "\n".join(lines) + "\n"
