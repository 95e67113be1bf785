"""Audit (read-only): what a policy would do to every stored VM of a selection."""
from __future__ import annotations

from collections.abc import Callable

from instancetype_webhook.admission.context import ReviewContext
from instancetype_webhook.fleet.finding import Finding, assess
from instancetype_webhook.fleet.selection import Shard, select
from instancetype_webhook.sources.kube import VMClient


def audit(client: VMClient, ctx: ReviewContext, namespace: str | None, shard: Shard | None = None,
          on_total: Callable[[int], None] | None = None,
          on_vm: Callable[[Finding], None] | None = None) -> list[Finding]:
    findings = []
    for vm in select(client, namespace, shard, on_total):
        finding, _ = assess(vm, ctx)
        findings.append(finding)
        if on_vm:
            on_vm(finding)
    return findings
