"""The webhook keeps what the user wrote where `expand` prints Go's shape (empty lists and maps)."""
from __future__ import annotations

import copy
from typing import Any

import jsonpatch

from instancetype_webhook.admission.context import ReviewContext
from instancetype_webhook.admission.mutate import answer_vm
from instancetype_webhook.sources.catalog import load_catalog

VM: dict[str, Any] = {
    "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
    "metadata": {"name": "empties", "namespace": "default", "labels": {}},
    "spec": {"runStrategy": "Halted",
             "dataVolumeTemplates": [{"metadata": {"name": "dv", "labels": {}},
                                      "spec": {"source": {"blank": {}}, "storage": {}}}],
             "template": {"spec": {"domain": {"devices": {"gpus": [], "disks": []}},
                                   "volumes": [{"name": "rootdisk", "containerDisk": {"image": "i"}}]}}},
}


def _answer(vm: dict[str, Any]):
    ctx = ReviewContext(source=load_catalog(), policy="expandAll")
    return answer_vm(copy.deepcopy(vm), None, "CREATE", "default", ctx)


def test_vm_without_references_gets_no_patch():
    answer = _answer(VM)
    assert answer.action == "allow" and answer.ops == []


def test_flattened_vm_keeps_the_empty_lists_and_maps_the_user_wrote():
    vm = copy.deepcopy(VM)
    vm["spec"]["instancetype"] = {"name": "u1.small"}
    answer = _answer(vm)
    assert answer.action == "patch"
    stored = jsonpatch.apply_patch(vm, answer.ops)
    assert stored["spec"]["template"]["spec"]["domain"]["devices"]["gpus"] == []
    assert stored["metadata"]["labels"] == {}
    assert stored["spec"]["dataVolumeTemplates"][0]["metadata"]["labels"] == {}
    assert not any(op["op"] == "remove" and op["path"].endswith(("/gpus", "/labels")) for op in answer.ops)
