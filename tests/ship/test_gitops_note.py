"""The GitOps page's (docs/install/gitops.md) Argo CD ignoreDifferences covers every field a real flattening changes.

Each public conformance case pairs a VM with upstream KubeVirt's own expansion of it; every leaf that
differs between the two must fall under one of the page's jsonPointers or jqPathExpressions.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from tests.kit.shared_data import CONFORMANCE

ROOT = Path(__file__).resolve().parents[2]


def readme_ignore_rules() -> tuple[list[str], list[re.Pattern]]:
    text = (ROOT / "docs/install/gitops.md").read_text()
    section = text[text.index("## Argo CD"):]
    block = re.search(r"```yaml\n(apiVersion: argoproj.io.*?)```", section, re.S).group(1)
    app = yaml.safe_load(block)
    (vm_rule,) = [r for r in app["spec"]["ignoreDifferences"] if r["kind"] == "VirtualMachine"]
    assert app["spec"]["syncPolicy"]["syncOptions"] == ["RespectIgnoreDifferences=true"]
    pointers = [p.replace("~1", "/").replace("~0", "~") for p in vm_rule["jsonPointers"]]
    return pointers, [jq_rule(jq) for jq in vm_rule["jqPathExpressions"]]


def jq_rule(jq: str) -> tuple[re.Pattern, bool]:
    """(path regex, only-when-empty) for the two jq forms the page uses: a path with `[]?`, and
    `PATH | select(. == {})`."""
    path, _, select = jq.partition(" | ")
    assert select in ("", "select(. == {})"), jq
    regex = "^" + re.escape(path).replace(r"\[\]\?", r"/\d+").replace(r"\.", "/") + "$"
    return re.compile(regex), bool(select)


def leaves(node, path: str = "") -> dict[str, object]:
    if isinstance(node, dict) and node:
        out = {}
        for key, value in node.items():
            out.update(leaves(value, f"{path}/{key}"))
        return out
    if isinstance(node, list) and node:
        out = {}
        for i, value in enumerate(node):
            out.update(leaves(value, f"{path}/{i}"))
        return out
    return {path: node}


def changed_paths(before: dict, after: dict) -> set[str]:
    a, b = leaves(before), leaves(after)
    return {p for p in a.keys() | b.keys() if a.get(p, object()) != b.get(p, object())}


def test_ignore_differences_cover_every_field_flattening_changes():
    pointers, patterns = readme_ignore_rules()
    cases = [json.loads(p.read_text()) for p in sorted(CONFORMANCE.glob("*.json"))]
    flattened = [c for c in cases if "vm" in c["expected"]]
    assert len(flattened) > 100
    uncovered = {}
    for case in flattened:
        after = leaves(case["expected"]["vm"])
        for path in changed_paths(case["input"]["vm"], case["expected"]["vm"]):
            if path == "/status" or path.startswith("/status/"):
                continue  # a webhook cannot change status (a subresource); Argo CD ignores it by default
            covered = any(path == p or path.startswith(p + "/") for p in pointers) or any(
                pat.match(path) and (not only_empty or after.get(path) == {}) for pat, only_empty in patterns)
            if not covered:
                uncovered.setdefault(path, case["name"])
    assert uncovered == {}


def test_the_rules_are_not_so_wide_that_they_hide_everything():
    pointers, _ = readme_ignore_rules()
    for kept in ("/spec", "/spec/template", "/spec/template/spec", "/spec/runStrategy",
                 "/spec/template/spec/volumes", "/metadata"):
        assert kept not in pointers
