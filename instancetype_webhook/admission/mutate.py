"""The mutating decision: flatten VMs under the reference policy (spec 4.5) with a minimal JSONPatch.

Under `expand`/`expandAll` the VM is also run through the whole instancetype validation pipeline
(spec 3.9) as submitted, because once flat the validator can no longer check the spread ratio or
the preference's requirements; a VM that fails is denied with the same 422 causes, never stored flat.
Expansion errors deny too: a reference that does not resolve (or names an unknown kind) with a
message naming the missing object, since it cannot be flattened (this wins over validation, which
ignores missing objects); otherwise the validator's causes, else the expansion's conflict causes.
Anything that is not a VM CREATE/UPDATE is allowed untouched.

Before any of that, under every policy, the VM goes through upstream's VM mutator instancetype stage
(`kubevirt.mutator.mutate_vm`): the matcher checks (spec 3.5; UPDATE compares with `oldObject`; a bad
matcher is a 422 with its causes), `inferFromVolume` (a failure is a 400 with upstream's message), and the
preferred architecture, machine type and DataVolumeTemplate storage class. Everything after works on the
VM as the stage leaves it. When the VM keeps its references (`reference`, or `expand` on an UPDATE of a
captured VM) nothing is patched under `reference`: virt-api's own VM mutator makes the stage's changes. Under
`expand`/`expandAll`, a VM that keeps its references, or that inference left without any (a matcher removed
under `inferFromVolumeFailurePolicy: Ignore`), gets the inference written (the names, `domain.memory`
cleared under Ignore, the removed matcher): the same change virt-api's mutator makes, so the stored VM is
upstream's whether virt-api runs before us, after us (it then finds nothing to do) or not at all.
When it is flattened, the JSONPatch goes from the VM as received to the flat VM, whose provenance annotation
says which matchers were inferred, from which volume and object (README "inferFromVolume" explains both orders
of the two webhooks). The validation and the expansion run in one pass (`kubevirt.review.check_and_expand`,
the same answers as validate_vm then expand).
"""
from __future__ import annotations

from typing import Any, Literal

from instancetype_webhook.admission import envelope as rv
from instancetype_webhook.admission.answer import VMAnswer, refusal
from instancetype_webhook.admission.context import (
    ReviewContext,
    ReviewOutcome,
    ReviewReply,
    is_vm,
    namespace_of,
    with_namespace,
)
from instancetype_webhook.admission.liveupdate import live_update_warnings
from instancetype_webhook.admission.policy import Policy, decide
from instancetype_webhook.admission.stored import stored_flat, with_stage_volumes
from instancetype_webhook.kubevirt.causes import Verdict
from instancetype_webhook.kubevirt.check_expand import check_and_expand
from instancetype_webhook.kubevirt.guest import review_guest
from instancetype_webhook.kubevirt.mutator import mutate_vm
from instancetype_webhook.kubevirt.resize import matchers_changed
from instancetype_webhook.patch import make_patch


def _allow(review: rv.Review, kind: str, outcome: ReviewOutcome, policy: Policy | Literal[""] = "",
           warnings: list[str] | None = None) -> ReviewReply:
    return ReviewReply(True, rv.response(review, Verdict.allow(warnings)), kind, outcome, policy=policy)


def _deny(review: rv.Review, kind: str, verdict: Verdict, policy: Policy) -> ReviewReply:
    return ReviewReply(False, rv.response(review, verdict), kind, "denied", policy=policy)


def answer_vm(vm: dict[str, Any], old_vm: dict[str, Any] | None, operation: str, namespace: str,
              ctx: ReviewContext) -> VMAnswer:
    """The /mutate decision for a VM CREATE or UPDATE (`old_vm` on UPDATE), without the review envelope."""
    # upstream's VM mutator instancetype stage first, under every policy: matcher checks (spec 3.5),
    # inferFromVolume, the preferred architecture / machine type / DataVolumeTemplate storage class
    stage = mutate_vm(vm, old_vm if operation == "UPDATE" else None, ctx.source, ctx.cluster, namespace=namespace)
    staged = stage.vm
    if staged is None:  # denied
        return VMAnswer("deny", stage.verdict, ctx.policy, "matchers" if stage.verdict.code == 422 else "inference")
    matched = stage.matched or staged
    decision = decide(ctx.policy, operation, staged, old_vm, namespace, ctx.namespace_labels, ctx.vm_policy_overrides)
    warnings = [*stage.verdict.warnings, *decision.warnings]
    if not decision.expand:
        # The VM keeps its references (`expand` on an UPDATE of a captured VM), or inference under Ignore left it
        # none: under expand/expandAll the inference is written here (what virt-api's mutator would write: the
        # inferred names, `domain.memory` cleared under Ignore, a matcher removed), so the VM is stored as
        # upstream stores it with or without virt-api, in either order. Under `reference` nothing is patched.
        ops = make_patch(vm, matched) if decision.policy != "reference" and matched is not vm else []
        if ops:
            return VMAnswer("patch", Verdict.allow(warnings), decision.policy, f"{decision.why}: inference only",
                            ops, matched)
        return VMAnswer("allow", Verdict.allow(warnings), decision.policy, decision.why)

    if operation == "UPDATE" and matchers_changed(staged, old_vm):  # naming a new size: admission/resize.py
        from instancetype_webhook.admission.resize import resize_answer

        # measured from the VM before the preference's submission-time values, like a fresh flattening
        answer = resize_answer(matched, old_vm, namespace, decision, ctx,
                               {i.matcher: i.to_dict() for i in stage.inferred})
        if answer.flat is not None:
            # the new preference's storage class in the templates without one (the stage's, as upstream)
            answer.flat = with_stage_volumes(answer.flat, staged, matched)
        if answer.flat is not None and (matched is not vm or staged is not matched):  # patch from the VM received
            answer.ops = make_patch(vm, answer.flat)
            answer.action = "patch" if answer.ops else "allow"
        return answer
    # validate_vm and expand in one pass (instancetype_webhook.kubevirt.check_expand): the same answers, half the work
    # Expanded from the VM after inference: the expansion writes the preferred architecture and machine
    # type itself (same values, its own key order, as a resize re-expands); only the DataVolumeTemplates'
    # storage class is the stage's alone, so it is taken from the stage's VM.
    verdict, flat, exc = check_and_expand(with_namespace(matched, namespace), ctx.source, ctx.cluster)
    denied = refusal(verdict, exc, decision.policy)
    if denied is not None:
        return VMAnswer("deny", denied, decision.policy, decision.why, error=exc)
    assert flat is not None  # refusal() is None only when the expansion succeeded
    # what flattening changes in the guest: a warning per device, or (--preserve-guest) kept in the flat VM
    flat, guest = review_guest(with_namespace(matched, namespace), flat, ctx.source, ctx.cluster, ctx.preserve_guest)
    flat = with_stage_volumes(flat, staged, matched)
    flat, ops = stored_flat(matched, flat, namespace, ctx, received=vm,
                            inferred={i.matcher: i.to_dict() for i in stage.inferred})
    allowed = Verdict.allow([*warnings, *verdict.warnings, *guest])
    return VMAnswer("patch" if ops else "allow", allowed, decision.policy, decision.why, ops, flat)


def mutate(review: rv.Review, ctx: ReviewContext) -> ReviewReply:
    request = review["request"]
    gvk = request["kind"]
    kind = gvk.get("kind", "")
    operation = request["operation"]
    if not is_vm(gvk) or operation not in ("CREATE", "UPDATE"):
        return _allow(review, kind, "skipped")
    vm = rv.subject(request)
    if type(vm.get("metadata")) is dict and vm["metadata"].get("deletionTimestamp"):
        return _allow(review, kind, "skipped")
    answer = answer_vm(vm, request.get("oldObject"), operation, namespace_of(request, vm), ctx)
    if answer.action == "deny":
        return _deny(review, kind, answer.verdict, answer.policy)
    answer.verdict.warnings += live_update_warnings(vm, request.get("oldObject"), operation, namespace_of(request, vm),
                                                    ctx, answer.flat)
    outcome: ReviewOutcome = "patched" if answer.ops else "allowed"
    return ReviewReply(True, rv.response(review, answer.verdict, answer.ops), kind, outcome,
                       patch_ops=len(answer.ops), policy=answer.policy)
