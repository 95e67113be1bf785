"""Nothing lost: our patch changes only what the instance type, preference and defaults own.

For every public corpus VM and for VMs generated from the VirtualMachine CRD schema (with unknown
fields planted at random places and in random key positions): the patch applies with jsonpatch to
the object decoded from the bytes as received, gives exactly the expansion, touches only owned
fields, keeps every other leaf and the key order of every untouched object. Over HTTPS too, with
large cloud-init user data.
"""
from __future__ import annotations

import base64
import copy
import json
import random
import string

import orjson
import pytest
from hypothesis import given

from instancetype_webhook.admission.context import ReviewContext
from instancetype_webhook.admission.stored import flatten
from instancetype_webhook.kubevirt.causes import ExpandError
from instancetype_webhook.kubevirt.expand import find_specs
from instancetype_webhook.kubevirt.source import InMemorySource
from instancetype_webhook.patch import make_patch
from instancetype_webhook.sources.catalog import load_catalog
from tests.kit import fault_strategies as S
from tests.kit.fuzz import fuzz_settings
from tests.kit.shared_data import conformance_cases
from tests.kit.survival import check, overwritten_by, strict

OBJECT_KEYS = ("instancetypes", "clusterInstancetypes", "preferences", "clusterPreferences")
CATALOG = ReviewContext(source=load_catalog(), policy="expand")


def _case_context(case: dict) -> ReviewContext:
    ns = case["input"]["vm"]["metadata"].get("namespace", "default")
    objs = [obj for key in OBJECT_KEYS for obj in case["input"].get(key) or []]
    return ReviewContext(source=InMemorySource(copy.deepcopy(objs), default_namespace=ns), policy="expand")


def _problems(vm: dict, ctx: ReviewContext) -> list[str] | None:
    """None when the VM cannot be expanded (denied: nothing to patch)."""
    raw = orjson.dumps(vm)
    received = orjson.loads(raw)
    ns = received["metadata"].get("namespace", "default")
    try:
        flat = flatten(received, ns, ctx)
    except ExpandError:
        return None
    assert strict(received) == strict(orjson.loads(raw)), "expansion wrote into the received VM"
    specs = find_specs(received, ctx.source, ctx.cluster.release)
    return check(raw, make_patch(received, flat), flat, overwritten_by(*specs))


def test_every_corpus_vm_loses_nothing():
    expanded, failures = 0, {}
    for case in conformance_cases():
        vm = copy.deepcopy(case["input"]["vm"])
        # unknown fields in every object of the VM, first and last in key order
        for node in _objects_of(vm):
            items = list(node.items())
            node.clear()
            node.update([(S.UNKNOWN + "-first", {"k": [1, "two"]}), *items, (S.UNKNOWN, "last")])
        problems = _problems(vm, _case_context(case))
        if problems is None:
            continue
        expanded += 1
        if problems:
            failures[case["name"]] = problems[:5]
    assert expanded >= 100, f"only {expanded} corpus VMs expanded"
    assert not failures, json.dumps(failures, indent=1)[:5000]


def _objects_of(value: object) -> list[dict]:
    out = []
    if type(value) is dict:
        out.append(value)
        for sub in list(value.values()):
            out.extend(_objects_of(sub))
    elif type(value) is list:
        for sub in value:
            out.extend(_objects_of(sub))
    return out


@fuzz_settings(ci=60, long=5000)
@given(S.crd_vms())
def test_generated_vms_lose_nothing(vm: dict):
    problems = _problems(vm, CATALOG)
    assert not problems, problems


def _user_data(size: int, seed: int) -> str:
    rnd = random.Random(seed)
    alphabet = string.printable + "äöü€😀\u2028\"\\/"
    return "#cloud-config\npassword: s3cret\nwrite_files:\n" + "".join(rnd.choice(alphabet) for _ in range(size))


@pytest.mark.parametrize("policy_name", ["u1.medium", "cx1.large", "o1.xlarge"])
def test_large_cloud_init_survives_over_https(expand_server, policy_name: str):
    vm = S.base_vm("big", user_data=_user_data(2 * 1024 * 1024, hash(policy_name)))
    vm["spec"]["instancetype"] = {"name": policy_name}
    vm["spec"]["preference"] = {"name": "fedora"}
    vm["spec"]["template"]["spec"]["domain"]["devices"][S.UNKNOWN] = {"z": 1, "a": 2}
    vm["metadata"] = {S.UNKNOWN: True, **vm["metadata"]}
    body = orjson.dumps(S.review(vm))
    with expand_server.client() as client:
        resp = client.post("/mutate", content=body, headers={"content-type": "application/json"})
    assert resp.status_code == 200, resp.text[:300]
    answer = resp.json()["response"]
    assert answer["allowed"], answer
    ops = json.loads(base64.b64decode(answer["patch"]))
    received = json.dumps(json.loads(body)["request"]["object"]).encode()
    flat = flatten(json.loads(received), "ns", CATALOG)
    assert check(received, ops, flat) == []
    assert all("cloudInitNoCloud" not in op["path"] and "userData" not in orjson.dumps(op).decode() for op in ops)


def test_the_checker_catches_losses():
    """The checks above can fail: a dropped unknown field, a foreign op, a re-ordered object."""
    vm = S.base_vm()
    vm["spec"][S.UNKNOWN] = {"b": 1, "a": 2}
    raw = orjson.dumps(vm)
    assert any(p.startswith("lost") for p in check(raw, [{"op": "remove", "path": f"/spec/{S.UNKNOWN}"}]))
    assert any(p.startswith("op outside") for p in check(raw, [{"op": "add", "path": "/metadata/labels/x",
                                                                   "value": "y"}]))
    reorder = [{"op": "remove", "path": f"/spec/{S.UNKNOWN}/b"}, {"op": "add", "path": f"/spec/{S.UNKNOWN}/b",
                                                                   "value": 1}]
    assert any(p.startswith("key order") for p in check(raw, reorder))
    assert check(raw, [{"op": "replace", "path": "/spec/runStrategy", "value": "Halted"}]) != []
