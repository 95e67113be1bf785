"""The flat VM as the webhook stores it: provenance annotation, no namespace the VM did not carry, and the
JSONPatch from the VM as received."""
from __future__ import annotations

from typing import Any

from instancetype_webhook.admission.context import ReviewContext, with_namespace
from instancetype_webhook.admission.policy import PROVENANCE_KEY, provenance, with_annotation
from instancetype_webhook.kubevirt.expand import expand
from instancetype_webhook.kubevirt.imprint import patch_and_imprint
from instancetype_webhook.patch import escape, make_patch

Inferred = dict[str, dict[str, str]]  # matcher -> {"volume", "kind", "namespace", "name"} (inferFromVolume)


def flatten(vm: dict[str, Any], namespace: str, ctx: ReviewContext, inferred: Inferred | None = None) -> dict[str, Any]:
    """The flat VM (raises ExpandError), with the provenance annotation when enabled."""
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
        value = provenance(vm, namespace, ctx.source, imprint, inferred, ctx.cluster.release.name)
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


def with_stage_volumes(flat: dict[str, Any], staged: dict[str, Any], matched: dict[str, Any]) -> dict[str, Any]:
    """`flat` with the DataVolumeTemplates the mutator stage wrote (preferredStorageClassName)."""
    templates = staged["spec"].get("dataVolumeTemplates")
    if templates is matched["spec"].get("dataVolumeTemplates") or type(flat.get("spec")) is not dict:
        return flat
    return {**flat, "spec": {**flat["spec"], "dataVolumeTemplates": templates}}
