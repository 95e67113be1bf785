"""POST /mutate: flatten VMs under the reference policy (spec 4.5) with a minimal JSONPatch.

Under `expand`/`expandAll` the VM is also run through the whole instancetype validation pipeline
(spec 3.9) as submitted, because once flat the validator can no longer check the spread ratio or
the preference's requirements; a VM that fails is denied with the same 422 causes, never stored flat.
Expansion errors deny too: a reference that does not resolve (or names an unknown kind) with a
message naming the missing object, since it cannot be flattened (this wins over validation, which
ignores missing objects); otherwise the validator's causes, else the expansion's conflict causes. Anything that is not a VM
CREATE/UPDATE is allowed untouched.

Before any of that, under every policy, the matchers are validated as upstream's VM mutator does first
(spec 3.5; UPDATE compares with `oldObject`): a bad matcher is a 422 with its causes. The validation
and the expansion run in one pass (`app.kubevirt.review.check_and_expand`, the same answers as
validate_vm then expand).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.kubevirt.causes import ExpandError, Verdict
from app.kubevirt.mutator import mutate_vm
from app.kubevirt.review import check_and_expand
from app.patch import make_patch
from app.server import review as rv
from app.server.context import Outcome, ReviewContext, is_vm, namespace_of, with_namespace
from app.server.policy import PROVENANCE_KEY, decide, provenance, with_annotation


def _allow(review: rv.Review, kind: str, outcome: str, policy: str = "", warnings: list[str] | None = None) -> Outcome:
    return Outcome(True, rv.response(review, Verdict.allow(warnings)), kind, outcome, policy=policy)


def _deny(review: rv.Review, kind: str, verdict: Verdict, policy: str) -> Outcome:
    return Outcome(False, rv.response(review, verdict), kind, "denied", policy=policy)


def expansion_denial(exc: ExpandError, policy: str) -> Verdict:
    if exc.kind == "conflict" and exc.causes:
        return Verdict.deny(exc.causes)
    message = exc.message
    if exc.kind == "notFound":
        message = f"{message}: the {policy} reference policy stores VMs flat, so the reference must resolve"
    return rv.deny(message, 400, exc.causes)


def flatten(vm: dict[str, Any], namespace: str, ctx: ReviewContext) -> dict[str, Any]:
    """The flat VM (raises ExpandError), with the provenance annotation when enabled."""
    from app.kubevirt.expand import expand

    return finish_flat(vm, expand(with_namespace(vm, namespace), ctx.source, ctx.cluster), namespace, ctx)


def finish_flat(vm: dict[str, Any], flat: dict[str, Any], namespace: str, ctx: ReviewContext) -> dict[str, Any]:
    """The expansion as stored: no namespace the VM did not carry, plus the provenance annotation."""
    if not (type(vm.get("metadata")) is dict and vm["metadata"].get("namespace")) and type(flat.get("metadata")) is dict:
        flat = {**flat, "metadata": {k: v for k, v in flat["metadata"].items() if k != "namespace"}}
    if ctx.provenance:
        flat = with_annotation(flat, PROVENANCE_KEY, provenance(vm, namespace, ctx.source))
    return flat


@dataclass
class VMAnswer:
    """What /mutate answers for one VM write, before it is wrapped in an AdmissionReview response.

    `action`: "deny" (verdict holds the causes), "allow" (kept as is) or "patch" (ops turn the VM into
    `flat`). Audit and sweep (app/fleet/) decide through this same function, so they cannot disagree.
    """

    action: str
    verdict: Verdict
    policy: str
    why: str = ""
    ops: list[dict[str, Any]] = field(default_factory=list)
    flat: dict[str, Any] | None = None
    error: ExpandError | None = None  # the expansion error behind a denial, if any


def answer_vm(vm: dict[str, Any], old_vm: dict[str, Any] | None, operation: str, namespace: str,
              ctx: ReviewContext) -> VMAnswer:
    """The /mutate decision for a VM CREATE or UPDATE (`old_vm` on UPDATE), without the review envelope."""
    # upstream's VM mutator instancetype stage first: matcher checks (spec 3.5), inferFromVolume
    stage = mutate_vm(vm, old_vm if operation == "UPDATE" else None, ctx.source, ctx.cluster)
    if not stage.verdict.allowed:
        return VMAnswer("deny", stage.verdict, ctx.policy, "matchers")
    decision = decide(ctx.policy, operation, vm, old_vm, namespace, ctx.namespace_labels, ctx.vm_policy_overrides)
    if not decision.expand:
        return VMAnswer("allow", Verdict.allow(decision.warnings), decision.policy, decision.why)

    # validate_vm and expand in one pass (app.kubevirt.review): the same answers, half the work
    verdict, flat, exc = check_and_expand(with_namespace(vm, namespace), ctx.source, ctx.cluster)
    if exc is not None:
        # A reference that does not resolve is the real reason (validation ignored it); otherwise
        # the validator's answer comes first, as /validate would give it.
        if verdict.allowed or exc.kind in ("notFound", "badRequest"):
            return VMAnswer("deny", expansion_denial(exc, decision.policy), decision.policy, decision.why, error=exc)
        return VMAnswer("deny", verdict, decision.policy, decision.why, error=exc)
    if not verdict.allowed:
        return VMAnswer("deny", verdict, decision.policy, decision.why)
    flat = finish_flat(vm, flat, namespace, ctx)
    ops = make_patch(vm, flat)
    allowed = Verdict.allow([*decision.warnings, *verdict.warnings])
    return VMAnswer("patch" if ops else "allow", allowed, decision.policy, decision.why, ops, flat)


def mutate(review: rv.Review, ctx: ReviewContext) -> Outcome:
    request = review["request"]
    gvk = request["kind"]
    kind = gvk.get("kind", "")
    operation = request["operation"]
    if not is_vm(gvk) or operation not in ("CREATE", "UPDATE"):
        return _allow(review, kind, "skipped")
    vm = request["object"]
    if type(vm.get("metadata")) is dict and vm["metadata"].get("deletionTimestamp"):
        return _allow(review, kind, "skipped")
    answer = answer_vm(vm, request.get("oldObject"), operation, namespace_of(request, vm), ctx)
    if answer.action == "deny":
        return _deny(review, kind, answer.verdict, answer.policy)
    return Outcome(True, rv.response(review, answer.verdict, answer.ops), kind, "patched" if answer.ops else "allowed",
                   patch_ops=len(answer.ops), policy=answer.policy)
