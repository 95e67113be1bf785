"""instancetype_webhook.fleet.report: the JSON documents' shapes and the table's per-namespace summary with totals."""
from __future__ import annotations

import io

from instancetype_webhook.fleet.finding import Finding
from instancetype_webhook.fleet.report import SWEEP_NAMES, audit_document, sweep_document, write_table
from instancetype_webhook.fleet.sweep import SweepResult

FINDINGS = [Finding("a", "x", "flatten", 3, ["/spec/instancetype"]), Finding("a", "y", "unchanged"),
            Finding("b", "z", "refuse", reason="no"), Finding("b", "w", "failed", reason="still conflicting")]


def test_audit_document_summary_keys():
    doc = audit_document("expand", FINDINGS[:3])
    assert doc["summary"] == {"flatten": 1, "refuse": 1, "skip": 0, "unresolved": 0, "unchanged": 1}
    assert doc["vms"][0] == {"namespace": "a", "name": "x", "action": "flatten", "ops": 3,
                             "fields": ["/spec/instancetype"], "causes": [], "reason": "", "policy": "",
                             "warnings": [], "running": False}


def test_sweep_document_summary_names_what_happened():
    doc = sweep_document("expandAll", SweepResult(FINDINGS, conflicts_retried=4, writes=1), dry_run=False)
    assert doc["summary"] == {"flattened": 1, "refused": 1, "skipped": 0, "unresolved": 0, "unchanged": 1,
                              "failed": 1, "conflicts_retried": 4}
    assert doc["writes"] == 1 and len(doc["vms"]) == 4


def test_table_lists_what_changes_then_namespaces_and_totals():
    out = io.StringIO()
    write_table(FINDINGS, out, "policy expandAll", {"writes": 1}, SWEEP_NAMES)
    lines = out.getvalue().splitlines()
    assert lines[0].split() == ["NAMESPACE", "NAME", "ACTION", "DETAIL"]
    assert lines[1].split()[:4] == ["a", "x", "flatten", "3"] and not any(" y " in line for line in lines)
    assert ["a", "1", "0", "0", "0", "1", "0"] in [line.split() for line in lines]
    assert lines[-2].split() == ["TOTAL", "1", "1", "0", "0", "1", "1"] and lines[-1] == "writes: 1"
