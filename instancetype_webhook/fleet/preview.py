"""The upgrade preview (`audit --kubevirt-version R` on a cluster that runs another release): which stored VMs
release R would answer differently. Each VM is assessed twice through /mutate's own function, once as the
cluster's release and once as R (the VM, its instance types and preferences pruned as R's API server would
serve them), and its domain XML is rendered under each; only the VMs whose finding (refused, unresolved,
flattened, the fields the flattening writes) or domain differ are listed, with what differs.

The two answers are compared by the what-if (`admission.whatif`, as `--compare-kubevirt-version` and the
playground compare theirs): a finding and its domain become an `Answer` (`answer_of`), and the `WhatIf` is told
as the preview's lines (`changes`)."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from instancetype_webhook.admission.answer import VMAnswer
from instancetype_webhook.admission.context import ReviewContext
from instancetype_webhook.admission.whatif import ABSENT, Answer, WhatIf, what_if
from instancetype_webhook.domxml import DomainError
from instancetype_webhook.domxml.cluster import domain_config_from_settings
from instancetype_webhook.domxml.stored import render_stored_vm
from instancetype_webhook.fleet.finding import Finding, assess
from instancetype_webhook.fleet.selection import Shard, select
from instancetype_webhook.kubevirt.causes import ExpandError
from instancetype_webhook.kubevirt.configuration import ClusterSettings
from instancetype_webhook.kubevirt.prune import PrunedSource, prune_object
from instancetype_webhook.sources.kube import VMClient

__all__ = ["Difference", "Preview", "answer_of", "changes", "compare", "preview"]


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


# A refusal's reason is part of what was decided: refused for another reason is another verdict.
_REASONED = ("refuse", "unresolved")
WRITTEN = "written"  # the value of each field an Answer says the flattening writes
SHOWN_DOMAIN_LINES = 4


def answer_of(finding: Finding, domain_xml: str | None, release: str) -> Answer:
    """A finding (and the domain the VM starts with, None when not rendered) as the what-if compares it: the
    action as the verdict (with the reason of a refusal), the causes' messages, the fields the flattening writes,
    the domain's lines."""
    verdict = f"{finding.action}: {finding.reason}" if finding.action in _REASONED else finding.action
    messages = tuple(sorted({str(cause.get("message", "")) for cause in finding.causes}))
    lines = tuple(domain_xml.splitlines()) if domain_xml is not None else ()
    return Answer(release, verdict, messages, dict.fromkeys(finding.fields, WRITTEN), lines)


def changes(now: Finding, then: Finding, compared: WhatIf) -> list[str]:
    """What `compared` (the what-if of `now`'s answer and `then`'s) says, one line per difference."""
    out = [f"action {now.action} -> {then.action}"] if now.action != then.action else []
    if compared.verdict is not None and now.action == then.action:
        out.append(f"refused otherwise: {then.reason}")
    out += [f"writes no longer: {path}" for path, _, written in compared.fields if written == ABSENT]
    out += [f"writes also: {path}" for path, was, _ in compared.fields if was == ABSENT]
    out += [f"cause no longer: {message}" for message in compared.causes_gone]
    out += [f"cause also: {message}" for message in compared.causes_added]
    diff = compared.changed_lines
    if diff:
        shown = "; ".join(line.strip() for line in diff[:SHOWN_DOMAIN_LINES])
        out.append(f"domain differs ({len(diff)} lines): {shown}" + ("; ..." if len(diff) > SHOWN_DOMAIN_LINES else ""))
    return out


def compare(vm: dict[str, Any], now: ReviewContext, then: ReviewContext) -> tuple[Finding, Difference | None]:
    """The VM's finding as the cluster's release (`now`) answers it, and how `then`'s release answers
    otherwise (None: the same)."""
    found_now, answer_now = assess(vm, now)
    as_then = prune_object(vm, then.cluster.release)
    found_then, answer_then = assess(as_then, then)
    domains: tuple[str | None, str | None] = (None, None)
    if answer_now is not None or answer_then is not None:
        domains = (domain(vm, answer_now, now, found_now.uid), domain(as_then, answer_then, then, found_now.uid))
    compared = what_if(answer_of(found_now, domains[0], now.cluster.release.name),
                       answer_of(found_then, domains[1], then.cluster.release.name))
    told = changes(found_now, found_then, compared)
    if not told:
        return found_now, None
    return found_now, Difference(found_now.namespace, found_now.name, found_now.action, found_then.action, told)


def preview(client: VMClient, now: ReviewContext, then: ClusterSettings, namespace: str | None,
            shard: Shard | None = None, on_total: Callable[[int], None] | None = None,
            on_vm: Callable[[Finding], None] | None = None) -> Preview:
    """Every selected VM compared as the cluster's release and as `then` (the settings answering as R)."""
    # R's API server serves the cluster's instance types and preferences pruned to R's schema, as it does the VM
    ctx_then = replace(now, cluster=then, source=PrunedSource(now.source, then.release))
    findings, differences = [], []
    for vm in select(client, namespace, shard, on_total):
        finding, difference = compare(vm, now, ctx_then)
        findings.append(finding)
        if difference is not None:
            differences.append(difference)
        if on_vm:
            on_vm(finding)
    return Preview(now.cluster.release.name, then.release.name, findings, differences)
