"""Audit and sweep output: one JSON/YAML object, or a table with a summary per namespace and totals."""
from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any, TextIO

import orjson
import yaml

from instancetype_webhook.fleet.finding import ACTIONS, Finding
from instancetype_webhook.fleet.sweep import SweepResult

# sweep's summary names what happened (past tense); the per-VM action stays the audit's word
SWEEP_NAMES = {"flatten": "flattened", "refuse": "refused", "skip": "skipped", "unresolved": "unresolved",
               "unchanged": "unchanged", "failed": "failed"}


def summary(findings: Iterable[Finding], names: dict[str, str] | None = None) -> dict[str, int]:
    counts = Counter(f.action for f in findings)
    keys = [*ACTIONS, *(a for a in counts if a not in ACTIONS)]
    return {(names or {}).get(a, a): counts.get(a, 0) for a in keys}


def audit_document(policy: str, findings: list[Finding]) -> dict[str, Any]:
    return {"policy": policy, "summary": summary(findings), "vms": [f.to_dict() for f in findings]}


def sweep_document(policy: str, result: SweepResult, dry_run: bool) -> dict[str, Any]:
    counts = summary(result.findings, SWEEP_NAMES)
    counts["failed"] = counts.get("failed", 0)
    counts["conflicts_retried"] = result.conflicts_retried
    return {"policy": policy, "dryRun": dry_run, "summary": counts, "writes": result.writes,
            "errors_retried": result.errors_retried,
            "disagreements": result.disagreements, "vms": [f.to_dict() for f in result.findings]}


def write_document(doc: dict[str, Any], fmt: str, out: TextIO) -> None:
    if fmt == "json":
        out.write(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        yaml.safe_dump(doc, out, sort_keys=False, width=120)


def _detail(f: Finding) -> str:
    if f.action == "flatten":
        return f"{f.ops} ops: " + ", ".join(f.fields[:4]) + (", ..." if len(f.fields) > 4 else "")
    return f.reason


def write_table(findings: list[Finding], out: TextIO, title: str, extra: dict[str, int] | None = None,
                names: dict[str, str] | None = None) -> None:
    rows = [(f.namespace, f.name, f.action, _detail(f)) for f in findings if f.action != "unchanged"]
    if rows:
        widths = [max(len(r[i]) for r in [("NAMESPACE", "NAME", "ACTION", ""), *rows]) for i in range(3)]
        out.write(f"{'NAMESPACE':<{widths[0]}}  {'NAME':<{widths[1]}}  {'ACTION':<{widths[2]}}  DETAIL\n")
        for r in rows:
            detail = r[3] if len(r[3]) <= 100 else r[3][:97] + "..."
            out.write(f"{r[0]:<{widths[0]}}  {r[1]:<{widths[1]}}  {r[2]:<{widths[2]}}  {detail}\n")
        out.write("\n")
    per_ns: dict[str, list[Finding]] = defaultdict(list)
    for f in findings:
        per_ns[f.namespace].append(f)
    columns = list(summary(findings, names))
    table = [(ns, summary(fs, names)) for ns, fs in sorted(per_ns.items())]
    table.append(("TOTAL", summary(findings, names)))
    width = max([len("NAMESPACE"), *(len(ns) for ns, _ in table)])
    out.write(f"{title}\n{'NAMESPACE':<{width}}" + "".join(f"  {c.upper():>10}" for c in columns) + "\n")
    for ns, counts in table:
        out.write(f"{ns:<{width}}" + "".join(f"  {counts.get(c, 0):>10}" for c in columns) + "\n")
    for key, value in (extra or {}).items():
        out.write(f"{key}: {value}\n")


def write_preview(preview: Any, out: TextIO) -> None:
    """The upgrade preview: the VMs the release answers differently, each difference on its own line."""
    if preview.cluster == preview.release:
        out.write(f"\nthe cluster runs KubeVirt {preview.cluster} already: no preview to make\n")
        return
    out.write(f"\nKubeVirt {preview.release} would answer {len(preview.differences)} of {len(preview.findings)} "
              f"VMs differently (the cluster runs {preview.cluster})\n")
    for diff in preview.differences:
        then = diff.now if diff.now == diff.then else f"{diff.now} -> {diff.then}"
        out.write(f"{diff.namespace}/{diff.name}  {then}\n")
        for change in diff.changes:
            out.write(f"  - {change if len(change) <= 160 else change[:157] + '...'}\n")
