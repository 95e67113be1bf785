"""Audit findings as policy reports: plain dicts in, report objects out (no I/O).

Two report APIs, one shape: `wgpolicyk8s.io/v1alpha2` `PolicyReport` (what Kyverno writes by default,
what Policy Reporter reads) and its successor `openreports.io/v1alpha1` `Report`. One report per
namespace, one result per VM; a namespace whose results would make an object larger than
`max_bytes` is split into parts (`instancetype-webhook`, `instancetype-webhook-2`, ...), each with
its own summary, so no object comes near the API server's limit (etcd stores at most 1.5 MiB).

Results: already flat (or no reference): pass; would flatten: warn or fail (`flatten_result`);
refused by the webhook or a reference that does not resolve: fail; kept by the policy: skip; could
not be decided: error.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

SOURCE = "instancetype-webhook"
NAME = "instancetype-webhook"
MANAGED_BY = "app.kubernetes.io/managed-by"
PART = "instancetype-webhook.kubevirt.io/part"  # annotation "2/3": which part of the namespace's report
POLICY_LABEL = "instancetype-webhook.kubevirt.io/policy"
CATEGORY = "KubeVirt instance types"
MAX_BYTES = 1_000_000  # well under etcd's 1.5 MiB and the API server's 3 MiB request limit
MAX_TEXT = 2048  # a message or property value longer than this is cut (a result stays small)
RESULTS = ("pass", "fail", "warn", "error", "skip")


@dataclass(frozen=True)
class ReportAPI:
    key: str
    group: str
    version: str
    plural: str
    kind: str

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}"


APIS: dict[str, ReportAPI] = {
    "policyreport": ReportAPI("policyreport", "wgpolicyk8s.io", "v1alpha2", "policyreports", "PolicyReport"),
    "openreports": ReportAPI("openreports", "openreports.io", "v1alpha1", "reports", "Report"),
}

# (rule, result, severity) per audit action; "flatten" takes its result from flatten_result
RULES: dict[str, tuple[str, str, str]] = {
    "unchanged": ("stored-flat", "pass", "info"),
    "flatten": ("stored-flat", "warn", "medium"),
    "skip": ("stored-flat", "skip", "info"),
    "refuse": ("admitted", "fail", "high"),
    "unresolved": ("references-resolve", "fail", "high"),
    "failed": ("evaluated", "error", "high"),
}


def _cut(text: str, limit: int = MAX_TEXT) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _causes(causes: Iterable[Mapping[str, Any]]) -> str:
    return "; ".join(f"{c['field']}: {c.get('message', '')}" if c.get("field") else str(c.get("message", ""))
                     for c in causes)


def message(finding: Mapping[str, Any], policy: str) -> str:
    action, reason = finding["action"], str(finding.get("reason") or "")
    if action == "flatten":
        text = f"would be flattened under {finding.get('policy') or policy}: {finding.get('ops', 0)} patch operations"
    elif action == "unchanged":
        text = "stored flat" if reason == "flat already" else reason or "stored flat"
    else:
        text = reason or action
    untold = [c for c in finding.get("causes") or [] if str(c.get("message", "")) not in text]
    if untold:
        text = f"{text} ({_causes(untold)})"
    return _cut(text)


def properties(finding: Mapping[str, Any]) -> dict[str, str]:
    out = {"action": str(finding["action"])}
    if finding.get("policy"):
        out["policy"] = str(finding["policy"])
    if finding["action"] == "flatten":
        out["operations"] = str(finding.get("ops", 0))
        out["fields"] = _cut(", ".join(finding.get("fields") or []), 1024)
    if finding.get("causes"):
        out["causes"] = _cut(_causes(finding["causes"]), 1024)
    if finding.get("running"):
        out["running"] = "true"
    if finding.get("warnings"):
        out["warnings"] = _cut("; ".join(finding["warnings"]), 1024)
    return out


def result(finding: Mapping[str, Any], policy: str, seconds: int, flatten_result: str = "warn") -> dict[str, Any]:
    """The report result for one VM (`finding`: Finding.to_dict() with its `uid`)."""
    rule, outcome, severity = RULES.get(finding["action"], ("evaluated", "error", "high"))
    if finding["action"] == "flatten":
        outcome = flatten_result
    resource = {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "namespace": finding["namespace"],
                "name": finding["name"]}
    if finding.get("uid"):
        resource["uid"] = str(finding["uid"])
    return {"source": SOURCE, "policy": f"{SOURCE}/{policy}", "rule": rule, "category": CATEGORY,
            "result": outcome, "severity": severity, "scored": True, "message": message(finding, policy),
            "properties": properties(finding), "resources": [resource],
            "timestamp": {"seconds": int(seconds), "nanos": 0}}


def summary(results: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    counts = Counter(str(r["result"]) for r in results)
    return {key: counts.get(key, 0) for key in RESULTS}


def part_name(index: int) -> str:
    return NAME if index == 0 else f"{NAME}-{index + 1}"


def _report(api: ReportAPI, namespace: str, index: int, parts: int, policy: str,
            results: list[dict[str, Any]]) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": part_name(index), "namespace": namespace,
                            "labels": {MANAGED_BY: SOURCE, POLICY_LABEL: policy},
                            "annotations": {PART: f"{index + 1}/{parts}"}}
    report: dict[str, Any] = {"apiVersion": api.api_version, "kind": api.kind, "metadata": meta}
    if api.key == "openreports":
        report["source"] = SOURCE
    report["summary"] = summary(results)
    report["results"] = results
    return report


def _size(obj: Any) -> int:
    return len(orjson.dumps(obj))


def split(results: list[dict[str, Any]], room: int) -> list[list[dict[str, Any]]]:
    """Consecutive runs of `results` whose JSON array fits in `room` bytes (each holds one at least)."""
    parts: list[list[dict[str, Any]]] = [[]]
    used = 2  # "[]"
    for item in results:
        size = _size(item) + 1  # and its comma
        if parts[-1] and used + size > room:
            parts.append([])
            used = 2
        parts[-1].append(item)
        used += size
    return parts


def reports(api: ReportAPI, findings: Iterable[Mapping[str, Any]], policy: str, seconds: int,
            flatten_result: str = "warn", max_bytes: int = MAX_BYTES) -> list[dict[str, Any]]:
    """One report per namespace (split into parts when larger than `max_bytes`), namespaces in order."""
    per_ns: dict[str, list[dict[str, Any]]] = {}
    for finding in findings:
        per_ns.setdefault(str(finding["namespace"]), []).append(result(finding, policy, seconds, flatten_result))
    out: list[dict[str, Any]] = []
    for namespace in sorted(per_ns):
        results = sorted(per_ns[namespace], key=lambda r: r["resources"][0]["name"])
        skeleton = _size(_report(api, namespace, 9999, 9999, policy, []))
        parts = split(results, max_bytes - skeleton)
        out.extend(_report(api, namespace, i, len(parts), policy, part) for i, part in enumerate(parts))
    return out
