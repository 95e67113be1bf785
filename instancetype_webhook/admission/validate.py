"""The validating decision: VM CREATE/UPDATE through the library's instancetype checks (spec 3.9), the four
instance type and preference kinds through object admission (3.8), anything else allowed untouched.

References that do not resolve are admitted, as upstream does (3.6), with the library's warning
naming them (at most 120 characters).
"""
from __future__ import annotations

from typing import Final

from instancetype_webhook.admission import envelope as rv
from instancetype_webhook.admission.context import (
    INSTANCETYPE_GROUP,
    ReviewContext,
    ReviewOutcome,
    ReviewReply,
    is_vm,
    namespace_of,
    with_namespace,
)
from instancetype_webhook.kubevirt.causes import Verdict
from instancetype_webhook.kubevirt.vm_webhook import admit_object, validate_vm

REFERENCE_KINDS: Final = frozenset({
    "VirtualMachineInstancetype", "VirtualMachineClusterInstancetype",
    "VirtualMachinePreference", "VirtualMachineClusterPreference",
})


def _verdict_for_vm(request: rv.AdmissionRequest, ctx: ReviewContext) -> Verdict:
    vm = rv.subject(request)
    if type(vm.get("metadata")) is dict and vm["metadata"].get("deletionTimestamp"):
        return Verdict.allow()
    namespace = namespace_of(request, vm)
    return validate_vm(with_namespace(vm, namespace), ctx.source, ctx.cluster)


def validate(review: rv.Review, ctx: ReviewContext) -> ReviewReply:
    request = review["request"]
    gvk = request["kind"]
    kind = gvk.get("kind", "")
    operation = request["operation"]
    outcome: ReviewOutcome
    if operation not in ("CREATE", "UPDATE"):
        verdict, outcome = Verdict.allow(), "skipped"
    elif is_vm(gvk):
        verdict = _verdict_for_vm(request, ctx)
        outcome = "allowed" if verdict.allowed else "denied"
    elif gvk.get("group") == INSTANCETYPE_GROUP and kind in REFERENCE_KINDS:
        verdict = admit_object(rv.subject(request), operation, ctx.cluster.release)
        outcome = "allowed" if verdict.allowed else "denied"
    else:
        verdict, outcome = Verdict.allow(), "skipped"
    return ReviewReply(verdict.allowed, rv.response(review, verdict), kind, outcome, policy=ctx.policy)
