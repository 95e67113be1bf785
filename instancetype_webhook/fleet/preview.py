"""The upgrade preview (`audit --kubevirt-version R` on a cluster that runs another release): which stored VMs
release R would answer differently. Each VM is assessed twice through /mutate's own function, once as the
cluster's release and once as R (the VM pruned as R's API server would store it), and its domain XML is
rendered under each; only the VMs whose finding (refused, unresolved, flattened, the fields the flattening
writes) or domain differ are listed, with what differs."""
from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from instancetype_webhook.admission.answer import VMAnswer
from instancetype_webhook.admission.context import ReviewContext
from instancetype_webhook.domxml import DomainError
from instancetype_webhook.domxml.cluster import domain_config_from_settings
from instancetype_webhook.domxml.stored import render_stored_vm
from instancetype_webhook.fleet.finding import Finding, assess
from instancetype_webhook.fleet.selection import Shard, select
from instancetype_webhook.kubevirt.causes import ExpandError
from instancetype_webhook.kubevirt.configuration import ClusterSettings
from instancetype_webhook.kubevirt.prune import prune_object
from instancetype_webhook.sources.kube import VMClient

__all__ = ["Difference", "Preview", "compare", "preview"]


@dataclass
class Difference:
    """A VM release R answers differently: its action now and under R, and each difference in one line."""
    namespace: str
    name: str
    now: str
    then: str
    changes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"namespace": self.namespace, "name": self.name, "action": self.now, "actionThen": self.then,
                "changes": self.changes}


@dataclass
class Preview:
    """The findings as the cluster's release answers them, and the VMs `release` answers differently."""
    cluster: str
    release: str
    findings: list[Finding]
    differences: list[Difference]

    def to_dict(self) -> dict[str, Any]:
        return {"cluster": self.cluster, "release": self.release, "differ": len(self.differences),
                "vms": [d.to_dict() for d in self.differences]}


def domain(vm: dict[str, Any], answer: VMAnswer | None, ctx: ReviewContext, uid: str) -> str:
    """The domain XML the VM starts with, stored as `answer` leaves it (or why it does not start)."""
    stored = answer.flat if answer is not None and answer.flat is not None else vm
    try:
        return render_stored_vm(stored, ctx.source, "reference", domain_config_from_settings(ctx.cluster),
                                uid=uid or None, preserve_guest=ctx.preserve_guest)
    except (ExpandError, DomainError) as exc:
        return f"does not start: {exc}"


def _lines(before: list[str], after: list[str], what: str) -> list[str]:
    gone, added = sorted(set(before) - set(after)), sorted(set(after) - set(before))
    return [*(f"{what} no longer: {item}" for item in gone), *(f"{what} also: {item}" for item in added)]


def _domain_change(now: str, then: str) -> list[str]:
    if now == then:
        return []
    diff = [line for line in difflib.unified_diff(now.splitlines(), then.splitlines(), lineterm="", n=0)
            if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    shown = "; ".join(line.strip() for line in diff[:4]) + ("; ..." if len(diff) > 4 else "")
    return [f"domain differs ({len(diff)} lines): {shown}"]


def _finding_changes(now: Finding, then: Finding) -> list[str]:
    changes = [f"action {now.action} -> {then.action}"] if now.action != then.action else []
    if now.action == then.action and now.reason != then.reason and now.action in ("refuse", "unresolved"):
        changes.append(f"refused otherwise: {then.reason}")
    changes += _lines(now.fields, then.fields, "writes")
    changes += _lines([c.get("message", "") for c in now.causes], [c.get("message", "") for c in then.causes],
                      "cause")
    return changes


def compare(vm: dict[str, Any], now: ReviewContext, then: ReviewContext) -> tuple[Finding, Difference | None]:
    """The VM's finding as the cluster's release (`now`) answers it, and how `then`'s release answers
    otherwise (None: the same)."""
    found_now, answer_now = assess(vm, now)
    as_then = prune_object(vm, then.cluster.release)
    found_then, answer_then = assess(as_then, then)
    changes = _finding_changes(found_now, found_then)
    if answer_now is not None or answer_then is not None:
        changes += _domain_change(domain(vm, answer_now, now, found_now.uid),
                                  domain(as_then, answer_then, then, found_now.uid))
    if not changes:
        return found_now, None
    return found_now, Difference(found_now.namespace, found_now.name, found_now.action, found_then.action, changes)


def preview(client: VMClient, now: ReviewContext, then: ClusterSettings, namespace: str | None,
            shard: Shard | None = None, on_total: Callable[[int], None] | None = None,
            on_vm: Callable[[Finding], None] | None = None) -> Preview:
    """Every selected VM compared as the cluster's release and as `then` (the settings answering as R)."""
    ctx_then = replace(now, cluster=then)
    findings, differences = [], []
    for vm in select(client, namespace, shard, on_total):
        finding, difference = compare(vm, now, ctx_then)
        findings.append(finding)
        if difference is not None:
            differences.append(difference)
        if on_vm:
            on_vm(finding)
    return Preview(now.cluster.release.name, then.release.name, findings, differences)
