"""admission/context.py: what a decision needs (ReviewContext's defaults), which objects are VMs, and the
namespace a VM is resolved in (its own, else the request's, else `default`)."""
from __future__ import annotations

import pytest

from instancetype_webhook.admission.context import ReviewContext, is_vm, namespace_of, with_namespace
from instancetype_webhook.kubevirt.configuration import DEFAULT_SETTINGS
from instancetype_webhook.kubevirt.source import InMemorySource


def test_context_defaults():
    ctx = ReviewContext(source=InMemorySource())
    assert (ctx.policy, ctx.cluster, ctx.namespace_labels) == ("reference", DEFAULT_SETTINGS, None)
    assert ctx.provenance and ctx.resize_handwritten
    assert not ctx.vm_policy_overrides and not ctx.preserve_guest


@pytest.mark.parametrize("gvk, expected", [
    ({"group": "kubevirt.io", "version": "v1", "kind": "VirtualMachine"}, True),
    ({"group": "kubevirt.io", "kind": "VirtualMachine"}, True),
    ({"group": "kubevirt.io", "kind": "VirtualMachineInstance"}, False),
    ({"group": "example.com", "kind": "VirtualMachine"}, False),
    ({"kind": "VirtualMachine"}, False),
    ({}, False),
])
def test_is_vm(gvk: dict, expected: bool):
    assert is_vm(gvk) is expected


@pytest.mark.parametrize("request_ns, metadata, expected", [
    ("req", {"namespace": "own"}, "own"),
    ("req", {"name": "v"}, "req"),
    ("req", {"namespace": ""}, "req"),
    ("req", {"namespace": None}, "req"),
    ("req", "not a dict", "req"),
    (None, {"name": "v"}, "default"),
    ("", None, "default"),
])
def test_namespace_of(request_ns, metadata, expected: str):
    request = {} if request_ns is None else {"namespace": request_ns}
    obj = {} if metadata is None else {"metadata": metadata}
    assert namespace_of(request, obj) == expected


def test_with_namespace_sets_it_only_when_missing_and_copies():
    own = {"metadata": {"name": "v", "namespace": "own"}, "spec": {}}
    assert with_namespace(own, "other") is own
    bare = {"metadata": {"name": "v"}, "spec": {"a": 1}}
    out = with_namespace(bare, "ns")
    assert out == {"metadata": {"name": "v", "namespace": "ns"}, "spec": {"a": 1}}
    assert bare == {"metadata": {"name": "v"}, "spec": {"a": 1}} and out["spec"] is bare["spec"]
    assert with_namespace({"metadata": "junk"}, "ns")["metadata"] == {"namespace": "ns"}
    assert with_namespace({}, "ns") == {"metadata": {"namespace": "ns"}}
