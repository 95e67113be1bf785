"""The resize path of /mutate (and /preview, the CLI): an UPDATE under `expand`/`expandAll` whose object
names an instance type and/or preference the stored object did not reference (instancetype_webhook/kubevirt/resize.py).

The flat VM is unflattened (its recorded imprint taken out, or, when it was written flat by hand,
the fields the new instance type owns removed unless `--no-resize-handwritten`), validated and
expanded as any VM with matchers, and stored flat again with new provenance. The patch turns the
submitted object into that VM.
"""
from __future__ import annotations

from typing import Any

from instancetype_webhook.admission.answer import VMAnswer, refusal
from instancetype_webhook.admission.context import ReviewContext, with_namespace
from instancetype_webhook.admission.policy import Decision, Policy
from instancetype_webhook.admission.stored import stored_flat
from instancetype_webhook.kubevirt.causes import Verdict
from instancetype_webhook.kubevirt.mutator import mutate_vm
from instancetype_webhook.kubevirt.resize import Resized, named, resize
from instancetype_webhook.patch import make_patch


def resize_vm(vm: dict[str, Any], old_vm: dict[str, Any] | None, namespace: str, ctx: ReviewContext,
              policy: Policy = "expand", inferred: dict[str, dict[str, str]] | None = None,
              ) -> tuple[Resized, Verdict | None, dict[str, Any] | None]:
    """(the core's answer, the denial or None, the VM as it would be stored); `inferred`: the matchers
    inferFromVolume resolved (for the provenance annotation)."""
    result = resize(with_namespace(vm, namespace), ctx.source, ctx.cluster, old_vm=old_vm,
                    handwritten=ctx.resize_handwritten)
    verdict, flat, exc = result.checked
    denied = refusal(verdict, exc, policy)
    if denied is not None or flat is None:
        return result, denied, None
    # the unflattened VM with the submitted metadata (the namespace only if the VM carried it)
    base = {**result.base, "metadata": vm["metadata"]} if "metadata" in vm else result.base
    stored, _ = stored_flat(base, flat, namespace, ctx, inferred=inferred)
    return result, None, stored


def resize_answer(vm: dict[str, Any], old_vm: dict[str, Any] | None, namespace: str, decision: Decision,
                  ctx: ReviewContext, inferred: dict[str, dict[str, str]] | None = None) -> VMAnswer:
    result, denied, stored = resize_vm(vm, old_vm, namespace, ctx, decision.policy, inferred)
    why = f"resize on {decision.why}"
    if denied is not None or stored is None:
        denied = denied or Verdict.deny(result.checked.verdict.causes)
        denied.warnings = [*decision.warnings, *result.warnings, *denied.warnings]
        return VMAnswer("deny", denied, decision.policy, why, error=result.checked.error)
    ops = make_patch(vm, stored)
    allowed = Verdict.allow([*decision.warnings, *result.warnings, *result.checked.verdict.warnings])
    return VMAnswer("patch" if ops else "allow", allowed, decision.policy, why, ops, stored)


def resize_named(vm: dict[str, Any], instancetype: str | None, preference: str | None, namespace: str,
                 ctx: ReviewContext) -> tuple[Resized | None, Verdict | None, dict[str, Any] | None, list[str]]:
    """The VM as `kubectl patch` naming `instancetype`/`preference` ([KIND/]NAME) would have it stored:
    the same mutator stage and resize as /mutate's UPDATE (for the CLI and /preview). Returns (the core's
    answer, None when the stage refused; the denial or None; the stored VM or None; the stage's warnings)."""
    update = named(vm, instancetype, preference)
    stage = mutate_vm(update, vm, ctx.source, ctx.cluster, namespace=namespace)
    if stage.vm is None:  # denied
        return None, stage.verdict, None, []
    matched = stage.matched or stage.vm
    inferred = {i.matcher: i.to_dict() for i in stage.inferred}
    result, denied, stored = resize_vm(matched, vm, namespace, ctx, inferred=inferred)
    return result, denied, stored, list(stage.verdict.warnings)
