"""POST /mutate: flatten VMs under the reference policy (spec 4.5) with a minimal JSONPatch.

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
When it is flattened, the JSONPatch goes from the
VM as received to the flat VM, whose provenance annotation says which matchers were inferred, from which
volume and object (README "inferFromVolume" explains both orders of the two webhooks). The validation
and the expansion run in one pass (`instancetype_webhook.kubevirt.review.check_and_expand`, the same answers as
validate_vm then expand).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from instancetype_webhook.kubevirt.causes import ExpandError, Verdict
from instancetype_webhook.kubevirt.guest import review_guest
from instancetype_webhook.kubevirt.imprint import patch_and_imprint
from instancetype_webhook.kubevirt.mutator import mutate_vm
from instancetype_webhook.kubevirt.resize import matchers_changed
from instancetype_webhook.kubevirt.review import check_and_expand
from instancetype_webhook.patch import escape, make_patch
from instancetype_webhook.server import review as rv
from instancetype_webhook.server.context import Outcome, ReviewContext, is_vm, namespace_of, with_namespace
from instancetype_webhook.server.liveupdate import live_update_warnings
from instancetype_webhook.server.policy import PROVENANCE_KEY, decide, provenance, with_annotation


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


Inferred = dict[str, dict[str, str]]  # matcher -> {"volume", "kind", "namespace", "name"} (inferFromVolume)


def flatten(vm: dict[str, Any], namespace: str, ctx: ReviewContext, inferred: Inferred | None = None) -> dict[str, Any]:
    """The flat VM (raises ExpandError), with the provenance annotation when enabled."""
    from instancetype_webhook.kubevirt.expand import expand

    return finish_flat(vm, expand(with_namespace(vm, namespace), ctx.source, ctx.cluster), namespace, ctx, inferred)


def finish_flat(vm: dict[str, Any], flat: dict[str, Any], namespace: str, ctx: ReviewContext,
                inferred: Inferred | None = None) -> dict[str, Any]:
    """The expansion as stored: no namespace the VM did not carry, plus the provenance annotation."""
    return stored_flat(vm, flat, namespace, ctx, inferred=inferred)[0]


def _metadata(obj: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": obj["metadata"]} if "metadata" in obj else {}


def _in_metadata(path: str) -> bool:
    return path.startswith("/metadata") and (len(path) == 9 or path[9] == "/")


def _annotation_ops(meta: dict[str, Any], annotated: dict[str, Any]) -> list[dict[str, Any]]:
    """make_patch from `meta` to the annotated metadata, which differs from it only in the provenance annotation."""
    if "annotations" not in meta:
        return [{"op": "add", "path": "/metadata/annotations", "value": annotated["metadata"]["annotations"]}]
    annotations = meta["annotations"]
    if type(annotations) is not dict:
        return [{"op": "replace", "path": "/metadata/annotations", "value": annotated["metadata"]["annotations"]}]
    value = annotated["metadata"]["annotations"][PROVENANCE_KEY]
    path = "/metadata/annotations/" + escape(PROVENANCE_KEY)
    if PROVENANCE_KEY not in annotations:
        return [{"op": "add", "path": path, "value": value}]
    old = annotations[PROVENANCE_KEY]
    return [] if type(old) is str and old == value else [{"op": "replace", "path": path, "value": value}]


def stored_flat(vm: dict[str, Any], flat: dict[str, Any], namespace: str, ctx: ReviewContext,
                received: dict[str, Any] | None = None,
                inferred: Inferred | None = None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """finish_flat and the JSONPatch from `received` (default `vm`) to it.

    `vm` is the VM flattening is measured from: after the mutator stage's matcher checks and inference
    (`Mutation.matched`; `received` is the VM as the API server sent it). The provenance annotation
    records the imprint (what flattening and the preference wrote into `vm`, `instancetype_webhook.kubevirt.imprint`, so
    that a resize can take it out) and which matchers were `inferred`, from which volume and object."""
    if (not (type(vm.get("metadata")) is dict and vm["metadata"].get("namespace"))
            and type(flat.get("metadata")) is dict):
        flat = {**flat, "metadata": {k: v for k, v in flat["metadata"].items() if k != "namespace"}}
    if not ctx.provenance:
        ops = make_patch(vm, flat)
    else:  # the patch and its imprint in one walk (instancetype_webhook.kubevirt.imprint.patch_and_imprint)
        ops, imprint = patch_and_imprint(vm, flat)
        value = provenance(vm, namespace, ctx.source, imprint, inferred)
        annotated = with_annotation(flat, PROVENANCE_KEY, value)
        meta = vm.get("metadata")
        if flat.get("metadata") is meta and isinstance(meta, dict):  # the walk wrote nothing under /metadata
            ops = [*_annotation_ops(meta, annotated), *ops]
        else:  # one metadata patch from the VM to the annotated result (it covers a dropped namespace too)
            ops = [*make_patch(_metadata(vm), _metadata(annotated)),
                   *(op for op in ops if not _in_metadata(op["path"]))]
        flat = annotated
    if received is not None and received is not vm:  # the stage changed the VM: patch what was received
        ops = make_patch(received, flat)
    return flat, ops


def refusal(verdict: Verdict, exc: ExpandError | None, policy: str) -> Verdict | None:
    """The denial for a check_and_expand answer, or None when the VM may be stored flat.

    A reference that does not resolve is the real reason (validation ignored it); otherwise the
    validator's answer comes first, as /validate would give it."""
    if exc is not None and (verdict.allowed or exc.kind in ("notFound", "badRequest")):
        return expansion_denial(exc, policy)
    return None if verdict.allowed and exc is None else verdict


def with_stage_volumes(flat: dict[str, Any], staged: dict[str, Any], matched: dict[str, Any]) -> dict[str, Any]:
    """`flat` with the DataVolumeTemplates the mutator stage wrote (preferredStorageClassName)."""
    templates = staged["spec"].get("dataVolumeTemplates")
    if templates is matched["spec"].get("dataVolumeTemplates") or type(flat.get("spec")) is not dict:
        return flat
    return {**flat, "spec": {**flat["spec"], "dataVolumeTemplates": templates}}


@dataclass
class VMAnswer:
    """What /mutate answers for one VM write, before it is wrapped in an AdmissionReview response.

    `action`: "deny" (verdict holds the causes), "allow" (kept as is) or "patch" (ops turn the VM as
    received into `flat`, its expansion after the mutator stage, e.g. with inferred matchers). Audit and
    sweep (instancetype_webhook/fleet/) decide through this same function, so they cannot disagree.
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

    if operation == "UPDATE" and matchers_changed(staged, old_vm):  # naming a new size: server/resize.py
        from instancetype_webhook.server.resize import resize_answer

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
    # validate_vm and expand in one pass (instancetype_webhook.kubevirt.review): the same answers, half the work
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


def mutate(review: rv.Review, ctx: ReviewContext) -> Outcome:
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
    return Outcome(True, rv.response(review, answer.verdict, answer.ops), kind, "patched" if answer.ops else "allowed",
                   patch_ops=len(answer.ops), policy=answer.policy)
