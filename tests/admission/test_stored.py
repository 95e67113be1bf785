"""admission/stored.py stored_flat: the provenance annotation's operation, written directly when the flat
VM kept the VM's own metadata, is the one the general metadata patch gives; the whole patch applies."""
from __future__ import annotations

import copy

import jsonpatch
import pytest

from instancetype_webhook.admission.context import ReviewContext
from instancetype_webhook.admission.mutate import stored_flat
from instancetype_webhook.kubevirt.expand import expand
from instancetype_webhook.kubevirt.imprint import PROVENANCE_KEY, patch_and_imprint
from instancetype_webhook.patch import make_patch
from instancetype_webhook.sources.catalog import load_catalog

CTX = ReviewContext(source=load_catalog(None, default_namespace="apps"), policy="expand")
VM = {
    "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "metadata": {"name": "web", "namespace": "apps"},
    "spec": {"instancetype": {"name": "u1.medium"}, "preference": {"name": "fedora"},
             "template": {"spec": {"domain": {"devices": {}}, "volumes": [
                 {"name": "rootdisk", "containerDisk": {"image": "quay.io/containerdisks/fedora:41"}}]}}},
}


def _reference(vm: dict, flat: dict, annotated: dict) -> list[dict]:
    """The general construction: the metadata patch, then the walk's other operations."""
    def _metadata(obj: dict) -> dict:
        return {"metadata": obj["metadata"]} if "metadata" in obj else {}

    walk, _ = patch_and_imprint(vm, flat)
    return [*make_patch(_metadata(vm), _metadata(annotated)),
            *(op for op in walk if op["path"] != "/metadata" and not op["path"].startswith("/metadata/"))]


def _with_annotations(annotations: object) -> dict:
    vm = copy.deepcopy(VM)
    vm["metadata"]["annotations"] = annotations
    return vm


def _written_value() -> str:
    flat, _ = stored_flat(VM, expand(VM, CTX.source), "apps", CTX)
    return flat["metadata"]["annotations"][PROVENANCE_KEY]


VARIANTS = {
    "no annotations": copy.deepcopy(VM),
    "null annotations": _with_annotations(None),
    "annotations not an object": _with_annotations("oops"),
    "empty annotations": _with_annotations({}),
    "other annotations": _with_annotations({"a/b": "1", "x~y": "2"}),
    "a stale provenance value": _with_annotations({PROVENANCE_KEY: "{}"}),
    "a provenance value of another type": _with_annotations({PROVENANCE_KEY: 5}),
    "the very provenance value": _with_annotations({PROVENANCE_KEY: _written_value()}),
    "no namespace (metadata copied)": {**copy.deepcopy(VM), "metadata": {"name": "web"}},
}


@pytest.mark.parametrize("name", VARIANTS)
def test_annotation_operation_is_the_general_metadata_patch(name: str) -> None:
    vm = VARIANTS[name]
    flat = expand({**vm, "metadata": {**vm["metadata"], "namespace": "apps"}} if name.startswith("no namespace")
                  else vm, CTX.source)
    if name.startswith("no namespace"):
        flat = {**flat, "metadata": {k: v for k, v in flat["metadata"].items() if k != "namespace"}}
    else:
        assert flat["metadata"] is vm["metadata"], "the expansion shares the VM's metadata"
    annotated, ops = stored_flat(vm, flat, "apps", CTX)
    assert ops == _reference(vm, flat, annotated)
    assert jsonpatch.apply_patch(vm, ops, in_place=False) == annotated
    if name == "the very provenance value":
        assert not any(op["path"].startswith("/metadata") for op in ops)
