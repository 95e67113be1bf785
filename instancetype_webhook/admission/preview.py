"""The preview of one VM, with no write: what /mutate and /validate would answer for it, the flat VM and its
JSONPatch, and the domain XML it would start with; or the same for a resize to a new size (what /preview,
the playground and the CLI's `resize` show)."""
from __future__ import annotations

from typing import Any

from instancetype_webhook.admission import envelope as rv
from instancetype_webhook.admission.context import ReviewContext, namespace_of, with_namespace
from instancetype_webhook.admission.policy import effective_policy
from instancetype_webhook.admission.resize import resize_named
from instancetype_webhook.admission.stored import flatten
from instancetype_webhook.domxml.cluster import domain_config_from_settings
from instancetype_webhook.domxml.stored import render_stored_vm
from instancetype_webhook.kubevirt.causes import ExpandError, Verdict
from instancetype_webhook.kubevirt.guest import review_guest
from instancetype_webhook.kubevirt.mutator import mutate_vm
from instancetype_webhook.kubevirt.vm_webhook import validate_vm
from instancetype_webhook.patch import make_patch


def preview(vm: Any, ctx: ReviewContext, namespace: str | None, instancetype: str | None = None,
            preference: str | None = None) -> dict[str, Any]:
    """VM in -> flat VM, JSONPatch, validation causes and (when it can be made) the domain XML.
    With `instancetype` and/or `preference` ([KIND/]NAME): the flat VM given a new size (preview_resize)."""
    if type(vm) is not dict or type(vm.get("spec")) is not dict:
        raise rv.ReviewError("", "body must be a VirtualMachine object with a spec")
    ns = namespace or namespace_of({}, vm)
    if instancetype is not None or preference is not None:
        return preview_resize(vm, ctx, ns, instancetype, preference)
    stage = mutate_vm(vm, None, ctx.source, ctx.cluster, namespace=ns)  # inferFromVolume etc., as /mutate
    if stage.vm is None:
        return {"allowed": False, "message": stage.verdict.message,
                "conflicts": [c.to_dict() for c in stage.verdict.causes], "warnings": []}
    verdict = validate_vm(with_namespace(stage.vm, ns), ctx.source, ctx.cluster)
    out: dict[str, Any] = {
        "allowed": verdict.allowed, "message": verdict.message,
        "conflicts": [c.to_dict() for c in verdict.causes], "warnings": [*stage.verdict.warnings, *verdict.warnings],
    }
    try:
        flat = flatten(stage.vm, ns, ctx, {i.matcher: i.to_dict() for i in stage.inferred})
    except ExpandError as exc:
        out["error"] = {"kind": exc.kind, "message": exc.message, "causes": [c.to_dict() for c in exc.causes]}
        return out
    # what flattening changes in the guest, as /mutate reports it (or keeps it, under --preserve-guest)
    flat, guest = review_guest(with_namespace(stage.vm, ns), flat, ctx.source, ctx.cluster, ctx.preserve_guest)
    out["warnings"] = [*out["warnings"], *guest]
    out["vm"] = flat
    out["patch"] = make_patch(vm, flat)
    out.update(domain_xml(with_namespace(vm, ns), ns, ctx))
    return out


def preview_resize(vm: dict[str, Any], ctx: ReviewContext, ns: str, instancetype: str | None,
                   preference: str | None) -> dict[str, Any]:
    """What `instancetype-webhook resize` answers, as JSON: the VM as an UPDATE naming the size would store it."""
    result, denied, stored, warnings = resize_named(vm, instancetype, preference, ns, ctx)
    verdict = denied or (result.checked.verdict if result else Verdict.allow())
    out: dict[str, Any] = {
        "allowed": stored is not None, "message": verdict.message,
        "conflicts": [c.to_dict() for c in verdict.causes],
        "warnings": [*warnings, *(result.warnings if result else []), *verdict.warnings],
        "replaced": [{"field": r.field, "old": r.old} for r in (result.replaced if result else [])],
    }
    exc = result.checked.error if result else None
    if stored is None:
        if exc is not None:
            out["error"] = {"kind": exc.kind, "message": exc.message, "causes": [c.to_dict() for c in exc.causes]}
        return out
    out["vm"] = stored
    out["patch"] = make_patch(vm, stored)
    out.update(domain_xml(with_namespace(stored, ns), ns, ctx))
    return out


def domain_xml(vm: dict[str, Any], namespace: str, ctx: ReviewContext) -> dict[str, Any]:
    """The domain of the VM as it will be stored under its effective policy (reference: it keeps its
    references and virt-controller applies them at start; expand/expandAll: the flat VM, as --preserve-guest
    stores it when that is on), then started."""
    policy, _, _ = effective_policy(ctx.policy, vm, namespace, ctx.namespace_labels, ctx.vm_policy_overrides)
    try:
        xml = render_stored_vm(vm, ctx.source, policy, domain_config_from_settings(ctx.cluster),
                               preserve_guest=ctx.preserve_guest)
        return {"domainXML": xml, "domainXMLPolicy": policy}
    except Exception as exc:  # the preview still shows the flat VM
        return {"domainXML": None, "domainXMLPolicy": policy, "domainXMLError": str(exc) or type(exc).__name__}
