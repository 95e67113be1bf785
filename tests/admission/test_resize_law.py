"""The resize law, through the same decision /mutate makes (`answer_vm`, no server):

    flatten(V with A), then an UPDATE naming B  ==  flatten(V with B)

for the VMs of the public conformance corpus (their instance type matcher replaced) and pairs of
common instance types across series (u1 <-> cx1 dedicated CPUs, <-> m1 hugepages, <-> gn1 GPUs, o1
overcommit, d1/n1 dedicated), preference changes too. Equal means: both refused with the same cause
fields, or both stored, and the stored VMs (the patch applied with `jsonpatch` to the object as
submitted, provenance annotation included) are equal. The same over JSON: the stored bytes as the
API server would keep them are equal.
"""
from __future__ import annotations

import copy
from typing import Any

import jsonpatch
import pytest

from instancetype_webhook.admission.context import ReviewContext
from instancetype_webhook.admission.mutate import answer_vm
from instancetype_webhook.admission.policy import PROVENANCE_KEY
from instancetype_webhook.kubevirt.source import InMemorySource
from instancetype_webhook.sources.catalog import load_catalog
from tests.kit.conformance_io import OBJECT_KEYS
from tests.kit.shared_data import conformance_cases

# gn1 (GPU) left common-instancetypes before the bundled release; these follow its old shape.
GN1 = [
    {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineClusterInstancetype",
     "metadata": {"name": f"gn1.{size}"},
     "spec": {"cpu": {"guest": cpus}, "memory": {"guest": memory},
              "gpus": [{"name": f"gpu{i}", "deviceName": "nvidia.com/A400"} for i in range(1, gpus + 1)]}}
    for size, cpus, memory, gpus in (("xlarge", 4, "16Gi", 1), ("2xlarge", 8, "32Gi", 1), ("4xlarge", 16, "64Gi", 2))
]
PAIRS = [
    ("u1.medium", "u1.2xlarge"), ("u1.2xlarge", "u1.medium"),
    ("u1.medium", "cx1.8xlarge"), ("cx1.8xlarge", "u1.medium"),
    ("u1.small", "m1.large"), ("m1.large", "u1.small"), ("m1.xlarge1gi", "cx1.large"),
    ("u1.medium", "gn1.xlarge"), ("gn1.xlarge", "u1.medium"), ("gn1.xlarge", "gn1.4xlarge"),
    ("o1.medium", "d1.xlarge"), ("cx1.medium1gi", "o1.large"), ("n1.medium", "u1.xlarge"),
]
PREFERENCE_CHANGES = [("fedora", "windows.11.virtio"), ("windows.2k22", "rhel.9"), ("ubuntu", "alpine")]
NAMESPACE = "ns-oracle"


def _catalog() -> InMemorySource:
    source = load_catalog(None, default_namespace=NAMESPACE)
    for obj in GN1:
        source.add(obj)
    return source


def _template_vms() -> list[tuple[str, dict[str, Any], list[dict[str, Any]]]]:
    """Corpus VMs that name objects by name only (no revisions, inference or status), with their objects."""
    out = []
    for case in conformance_cases():
        vm = case["input"]["vm"]
        spec = vm.get("spec") or {}
        matchers = [spec.get(k) for k in ("instancetype", "preference") if spec.get(k) is not None]
        if (case["input"].get("kubevirtConfiguration") or "status" in vm
                or any(m.get("revisionName") or m.get("inferFromVolume") for m in matchers)):
            continue
        objects = [obj for key in OBJECT_KEYS for obj in case["input"].get(key) or []]
        out.append((case["name"], vm, objects))
    return out


TEMPLATES = _template_vms()
# A VM whose own maxSockets cx1 overwrites (a `replaced` imprint entry, put back on the way to u1).
TEMPLATES.append(("own-max-sockets", {
    "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "metadata": {"name": "tuned", "namespace": NAMESPACE},
    "spec": {"runStrategy": "Halted", "preference": {"name": "fedora"}, "template": {"spec": {
        "domain": {"cpu": {"maxSockets": 16}, "devices": {}},
        "volumes": [{"name": "rootdisk", "containerDisk": {"image": "quay.io/containerdisks/fedora:41"}}]}}}}, []))


class Layered:
    """A case's own objects over the common catalogue (loaded once)."""

    catalog = _catalog()

    def __init__(self, objects: list[dict[str, Any]]):
        self.own = InMemorySource(objects, default_namespace=NAMESPACE)

    def get(self, kind: str, name: str, namespace: str | None = None) -> dict[str, Any] | None:
        return self.own.get(kind, name, namespace) or self.catalog.get(kind, name, namespace)

    def get_revision(self, name: str, namespace: str) -> dict[str, Any] | None:
        return self.own.get_revision(name, namespace)


def _ctx(objects: list[dict[str, Any]], handwritten: bool = True) -> ReviewContext:
    return ReviewContext(source=Layered(objects), policy="expand", resize_handwritten=handwritten)


def _named(vm: dict[str, Any], instancetype: str | None = None, preference: str | None = None) -> dict[str, Any]:
    out = copy.deepcopy(vm)
    if instancetype is not None:
        out["spec"]["instancetype"] = {"name": instancetype}
    if preference is not None:
        out["spec"]["preference"] = {"name": preference}
    return out


def _store(vm: dict[str, Any], old: dict[str, Any] | None, ctx: ReviewContext) -> tuple[bool, Any]:
    """(allowed, stored VM or the denial's cause fields) as the API server would end up."""
    answer = answer_vm(vm, old, "UPDATE" if old is not None else "CREATE", NAMESPACE, ctx)
    if answer.action == "deny":
        return False, sorted(c.field for c in answer.verdict.causes) or answer.verdict.message
    return True, jsonpatch.apply_patch(vm, answer.ops, in_place=False)


def _law(vm: dict[str, Any], ctx: ReviewContext, before: dict[str, str | None], after: dict[str, str | None],
         named: dict[str, str | None] | None = None) -> str:
    """'' when the law holds, 'skip' when flattening with `before` is refused, else the difference.
    `named`: what the UPDATE names (default `after`)."""
    ok, flat_a = _store(_named(vm, **before), None, ctx)
    if not ok:
        return "skip"
    ok_b, flat_b = _store(_named(vm, **after), None, ctx)
    update = _named(flat_a, **(after if named is None else named))
    ok_r, resized = _store(update, flat_a, ctx)
    if ok_b != ok_r:
        return (f"flatten with B {'stored' if ok_b else 'refused'}, resize {'stored' if ok_r else 'refused'}: "
                f"{flat_b if not ok_b else resized}")
    if not ok_b:  # both refused: the same causes
        return "" if flat_b == resized else f"causes {resized} != {flat_b}"
    if resized != flat_b:
        diff = jsonpatch.make_patch(flat_b, resized).patch
        return f"resized != flattened with B: {diff[:4]}"
    return ""


@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: f"{p[0]}->{p[1]}")
def test_law_over_the_corpus(pair: tuple[str, str]) -> None:
    a, b = pair
    failures, checked = {}, 0
    for name, vm, objects in TEMPLATES:
        result = _law(vm, _ctx(objects), {"instancetype": a}, {"instancetype": b})
        if result == "skip":
            continue
        checked += 1
        if result:
            failures[name] = result
    assert not failures, failures
    assert checked >= 80, f"only {checked} corpus VMs flatten with {a}"


@pytest.mark.parametrize("change", PREFERENCE_CHANGES, ids=lambda p: f"{p[0]}->{p[1]}")
def test_law_when_the_preference_changes_too(change: tuple[str, str]) -> None:
    failures, checked = {}, 0
    for name, vm, objects in TEMPLATES[::3]:
        for before_it, after_it in (("u1.large", "u1.large"), ("u1.large", "cx1.xlarge")):
            result = _law(vm, _ctx(objects), {"instancetype": before_it, "preference": change[0]},
                          {"instancetype": after_it, "preference": change[1]})
            checked += result != "skip"
            if result not in ("", "skip"):
                failures[f"{name} {before_it}->{after_it}"] = result
    assert not failures, failures
    assert checked >= 20


def test_preference_only_change_keeps_the_recorded_instance_type() -> None:
    """Naming only a new preference re-applies the recorded instance type with it."""
    failures, checked = {}, 0
    for name, vm, objects in TEMPLATES[::5]:
        result = _law(vm, _ctx(objects), {"instancetype": "u1.xlarge", "preference": "fedora"},
                      {"instancetype": "u1.xlarge", "preference": "windows.11.virtio"},
                      {"preference": "windows.11.virtio"})
        checked += result != "skip"
        if result not in ("", "skip"):
            failures[name] = result
    assert not failures, failures
    assert checked >= 10


def test_resize_and_back_is_the_original_flat_vm() -> None:
    ctx = _ctx([])
    checked = 0
    for name, vm, _objects in [*TEMPLATES[::2], TEMPLATES[-1]]:
        ok, flat_a = _store(_named(vm, "u1.medium"), None, ctx)
        if not ok:
            continue
        ok, to_cx1 = _store(_named(flat_a, "cx1.8xlarge"), flat_a, ctx)
        if not ok:
            continue
        ok, back = _store(_named(to_cx1, "u1.medium"), to_cx1, ctx)
        assert ok and back == flat_a, name
        checked += 1
    assert checked >= 30


def test_annotation_stays_small() -> None:
    vm = {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "metadata": {"name": "web", "namespace": NAMESPACE},
          "spec": {"runStrategy": "Always", "instancetype": {"name": "u1.medium"}, "preference": {"name": "fedora"},
                   "template": {"spec": {"domain": {"devices": {}}, "volumes": [
                       {"name": "rootdisk", "containerDisk": {"image": "quay.io/containerdisks/fedora:41"}},
                       {"name": "cloudinit", "cloudInitNoCloud": {"userData": "#cloud-config\n"}}]}}}}
    ok, flat = _store(vm, None, _ctx([]))
    assert ok
    assert len(flat["metadata"]["annotations"][PROVENANCE_KEY]) < 1024
