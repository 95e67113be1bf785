"""One playground run: the editor's text and the page's choices in, everything the page shows out.

The VM goes through the webhook's own handlers, as the API server would send it: /mutate's handler
(`admission.mutate.mutate`) on the review, its JSONPatch applied (the VM as stored), then /validate's
handler on the stored VM; the domain XML and the resize preview are /preview's (`admission.preview`).
Nothing is written anywhere: the review is a dry run and the answers are only shown. The fields the
release's schema does not have come with their place in the text (`unknownFields`, `playground.unknown`).
"""
from __future__ import annotations

import base64
import copy
import dataclasses
from typing import Any, Literal

import jsonpatch
import orjson

from instancetype_webhook.admission import envelope as rv
from instancetype_webhook.admission.context import ReviewContext, namespace_of, with_namespace
from instancetype_webhook.admission.policy import POLICIES, Policy, effective_policy, has_matcher, is_policy
from instancetype_webhook.admission.whatif import Answer, leaf_paths, what_if
from instancetype_webhook.kubevirt.prune import PrunedSource, prune_object
from instancetype_webhook.playground.sidebyside import changed_lines, rows
from instancetype_webhook.playground.unknown import unknown_field_marks
from instancetype_webhook.playground.yamlpos import Parsed, Path, YAMLProblem, dump, locate, parse

VM_KIND = {"group": "kubevirt.io", "version": "v1", "kind": "VirtualMachine"}
VM_RESOURCE = {"group": "kubevirt.io", "version": "v1", "resource": "virtualmachines"}
# The API server keeps objects up to 1.5 MiB (etcd's request limit); a VM's YAML is somewhat larger than its JSON.
MAX_TEXT_BYTES = 2 * 1024 * 1024
MATCHER_KINDS = {"instancetype": ("VirtualMachineInstancetype", "VirtualMachineClusterInstancetype"),
                 "preference": ("VirtualMachinePreference", "VirtualMachineClusterPreference")}


class PlaygroundError(ValueError):
    """Input the playground cannot run (the message is for the page)."""


@dataclasses.dataclass(frozen=True)
class Choices:
    """What the page picked besides the text: a policy, matchers to set, a size to resize the stored VM to."""

    policy: Policy | Literal[""] = ""
    instancetype: str = ""
    preference: str = ""
    resize_instancetype: str = ""
    resize_preference: str = ""
    compare_release: str = ""  # a second KubeVirt release: the page also shows what it answers otherwise

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> Choices:
        values: dict[str, str] = {}
        for name in ("policy", "instancetype", "preference", "resize_instancetype", "resize_preference",
                     "compare_release"):
            value = body.get(name, "")
            if value is None:
                value = ""
            if not isinstance(value, str) or len(value) > 253 + 64:
                raise PlaygroundError(f"{name} must be a short string")
            values[name] = value.strip()
        policy = values.pop("policy")
        if policy and not is_policy(policy):
            raise PlaygroundError(f"policy must be one of {', '.join(POLICIES)}")
        return cls(policy=policy if is_policy(policy) else "", **values)


def matcher(value: str, which: str) -> dict[str, str]:
    """`NAME` or `KIND/NAME` as a VM's spec.instancetype / spec.preference."""
    kind, _, name = value.rpartition("/")
    if not name:
        raise PlaygroundError(f"{which}: give NAME or KIND/NAME")
    if kind and kind not in MATCHER_KINDS[which]:
        raise PlaygroundError(f"{which}: kind must be one of {', '.join(MATCHER_KINDS[which])}")
    return {"kind": kind, "name": name} if kind else {"name": name}


def subject(parsed: Parsed, max_depth: int) -> tuple[rv.Review, Path]:
    """The review to send (a bare VM becomes a CREATE) and where its object sits in the text."""
    doc = parsed.value
    if not isinstance(doc, dict):
        raise PlaygroundError("the text must be a VirtualMachine (a YAML or JSON object)")
    if doc.get("kind") == "AdmissionReview":
        review = rv.parse_review(orjson.dumps(doc), max_depth)
        obj = review["request"].get("object")
        if not is_vm_object(obj) or not rv_is_vm(review):
            raise PlaygroundError("the AdmissionReview's request.object must be a VirtualMachine")
        return review, ("request", "object")
    if not is_vm_object(doc):
        raise PlaygroundError(f"the text holds a {doc.get('kind') or 'object without a kind'}: "
                              "paste a VirtualMachine (kind: VirtualMachine, with a spec)")
    namespace = namespace_of({}, doc)
    meta = doc.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) and isinstance(meta.get("name"), str) else ""
    built: dict[str, Any] = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
        "uid": "playground", "kind": VM_KIND, "resource": VM_RESOURCE, "operation": "CREATE",
        "namespace": namespace, "name": name, "object": doc, "dryRun": True}}
    return rv.parse_review(orjson.dumps(built), max_depth), ()


def is_vm_object(obj: Any) -> bool:
    return isinstance(obj, dict) and obj.get("kind") == "VirtualMachine" and isinstance(obj.get("spec"), dict)


def rv_is_vm(review: rv.Review) -> bool:
    kind = review["request"]["kind"]
    return kind.get("group") == "kubevirt.io" and kind.get("kind") == "VirtualMachine"


def with_matchers(review: rv.Review, choices: Choices) -> rv.Review:
    """The review whose object names the chosen instance type / preference (a copy)."""
    if not (choices.instancetype or choices.preference):
        return review
    review = copy.deepcopy(review)
    spec = review["request"]["object"]["spec"]  # type: ignore[index]
    for which in ("instancetype", "preference"):
        value = getattr(choices, which)
        if value:
            spec[which] = matcher(value, which)
    return review


def answer(handler: Any, review: rv.Review, ctx: ReviewContext) -> dict[str, Any]:
    """A handler's AdmissionReview response, decoded (the patch as a list)."""
    response: dict[str, Any] = orjson.loads(handler(review, ctx).body)["response"]
    if "patch" in response:
        response["patch"] = orjson.loads(base64.b64decode(response["patch"]))
    return response


def causes(response: dict[str, Any], parsed: Parsed, prefix: Path) -> list[dict[str, Any]]:
    """A denial's causes, each with the line and column of its field in the editor's text."""
    status = response.get("status") or {}
    out = []
    for cause in (status.get("details") or {}).get("causes") or []:
        field = cause.get("field") or ""
        position, exact = locate(parsed.positions, field, prefix) if field else (None, False)
        out.append({**cause, "line": position.line if position else None,
                    "column": position.column if position else None, "exact": exact})
    return out


def run(text: str, choices: Choices, ctx: ReviewContext, max_depth: int = 200) -> dict[str, Any]:
    """Everything the page shows for `text` (see the module docstring)."""
    if len(text) > MAX_TEXT_BYTES // 4 and len(text.encode()) > MAX_TEXT_BYTES:
        return {"ok": False, "error": f"the text is larger than {MAX_TEXT_BYTES // 1024 // 1024} MiB: no API server "
                "stores a VM that large (etcd's limit is 1.5 MiB)"}
    try:
        parsed = parse(text)
    except YAMLProblem as exc:
        return {"ok": False, "error": str(exc), "yamlError": {"message": exc.message, "line": exc.line,
                                                               "column": exc.column}}
    try:
        review, prefix = subject(parsed, max_depth)
        review = with_matchers(review, choices)
    except (PlaygroundError, rv.ReviewError) as exc:
        return {"ok": False, "error": str(exc)}
    ctx = dataclasses.replace(ctx, policy=choices.policy or ctx.policy)
    if not choices.compare_release:
        return examine(review, parsed, prefix, choices, ctx)
    from instancetype_webhook.kubevirt.configuration import with_release
    from instancetype_webhook.kubevirt.releases import resolve

    try:
        second = resolve(choices.compare_release, default="")
    except ValueError as exc:
        return {"ok": False, "error": f"compare with release: {exc}"}
    out = examine(review, parsed, prefix, choices, ctx)
    as_second = copy.deepcopy(review)
    as_second["request"]["object"] = prune_object(review["request"]["object"], second)
    as_release = dataclasses.replace(ctx, cluster=with_release(ctx.cluster, second),
                                     source=PrunedSource(ctx.source, second))  # what R's API server serves
    then = examine(as_second, parsed, prefix, choices, as_release)
    compared = what_if(what_was_answered(out, ctx.cluster.release.name),
                       what_was_answered(then, second.name))
    return {**out, "whatIf": {**compared.to_dict(), "text": compared.render()}}


def what_was_answered(result: dict[str, Any], release: str) -> Answer:
    """One run's answer as the what-if compares it: the verdict, the causes and warnings, the stored VM's
    fields and the domain XML's lines."""
    if result.get("allowed"):
        verdict = "allowed"
    else:
        status = result.get("status") or {}
        verdict = f"refused by /{result.get('deniedBy')} ({status.get('code')}): {status.get('message')}"
    causes = [f"{c.get('field') or '<no field>'}: {c.get('message')}" for c in result.get("causes") or []]
    causes += [f"warning: {w}" for w in result.get("warnings") or []]
    stored = parse(result["storedYAML"]).value if result.get("storedYAML") else {}
    domain_xml = result.get("domainXML") or result.get("domainXMLError") or ""
    return Answer(release, verdict, tuple(causes), leaf_paths(stored), tuple(str(domain_xml).splitlines()))


def examine(review: rv.Review, parsed: Parsed, prefix: Path, choices: Choices, ctx: ReviewContext) -> dict[str, Any]:
    from instancetype_webhook.admission.mutate import mutate
    from instancetype_webhook.admission.validate import validate

    request = review["request"]
    vm: dict[str, Any] = request["object"]  # type: ignore[assignment]
    namespace = namespace_of(dict(request), vm)
    policy, origin, _ = effective_policy(ctx.policy, vm, namespace, ctx.namespace_labels, ctx.vm_policy_overrides)
    sent = dump(vm)
    out: dict[str, Any] = {"ok": True, "namespace": namespace, "policy": policy, "policyOrigin": origin,
                           "serverPolicy": ctx.policy, "operation": request["operation"], "sentYAML": sent}
    mutated = answer(mutate, review, ctx)
    out["mutate"] = {k: v for k, v in mutated.items() if k != "uid"}
    out["warnings"] = list(mutated.get("warnings") or [])
    out["unknownFields"] = unknown_field_marks(vm, parsed, prefix, ctx.cluster.release)
    if not mutated["allowed"]:
        return {**out, "allowed": False, "deniedBy": "mutate", "status": mutated.get("status"),
                "causes": causes(mutated, parsed, prefix)}
    patch = mutated.get("patch") or []
    stored = jsonpatch.apply_patch(vm, patch) if patch else vm
    checked = answer(validate, {**review, "request": {**request, "object": stored}}, ctx)
    out["validate"] = {k: v for k, v in checked.items() if k != "uid"}
    out["warnings"] += [w for w in checked.get("warnings") or [] if w not in out["warnings"]]
    out["patch"] = patch
    if not checked["allowed"]:
        return {**out, "allowed": False, "deniedBy": "validate", "status": checked.get("status"),
                "causes": causes(checked, parsed, prefix)}
    stored_yaml = dump(stored)
    diff = rows(sent.splitlines(), stored_yaml.splitlines())
    out.update(allowed=True, storedYAML=stored_yaml, diff=diff, changedLines=list(changed_lines(diff)),
               flat=not has_matcher(stored.get("spec") or {}), patchLines=patch_lines(patch, sent, stored_yaml))
    out.update(domain(stored, namespace, ctx))
    if choices.resize_instancetype or choices.resize_preference:
        out["resize"] = resize(stored, stored_yaml, namespace, choices, ctx)
    return out


def patch_lines(patch: list[dict[str, Any]], sent: str, stored: str) -> list[dict[str, Any] | None]:
    """Where each operation lands in the side-by-side texts: a removal in the VM as sent, anything else in
    the VM as stored ({"side": "sent"|"stored", "line": N}; None for a path not found)."""
    positions = {"sent": parse(sent).positions, "stored": parse(stored).positions}
    out: list[dict[str, Any] | None] = []
    for op in patch:
        side = "sent" if op.get("op") == "remove" else "stored"
        position, exact = locate(positions[side], str(op.get("path", "")))
        out.append({"side": side, "line": position.line} if position is not None and exact else None)
    return out


def domain(vm: dict[str, Any], namespace: str, ctx: ReviewContext) -> dict[str, Any]:
    """/preview's domain XML of the stored VM."""
    from instancetype_webhook.admission.preview import domain_xml

    return domain_xml(with_namespace(vm, namespace), namespace, ctx)


def resize(stored: dict[str, Any], stored_yaml: str, namespace: str, choices: Choices,
           ctx: ReviewContext) -> dict[str, Any]:
    """/preview's resize of the stored VM: the VM an UPDATE naming the new size would store."""
    from instancetype_webhook.admission.preview import preview

    if has_matcher(stored.get("spec") or {}):
        return {"allowed": False, "message": "the stored VM keeps its references (policy reference, or an UPDATE "
                "of a captured VM): a resize previews a flat VM; choose the expand or expandAll policy"}
    result = preview(stored, ctx, namespace, choices.resize_instancetype or None, choices.resize_preference or None)
    if "vm" in result:
        result["vmYAML"] = dump(result.pop("vm"))
        result["diff"] = rows(stored_yaml.splitlines(), result["vmYAML"].splitlines())
    return result
