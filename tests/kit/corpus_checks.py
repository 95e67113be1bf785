"""What the library must answer for one public conformance case, as assertions: tests/kubevirt/test_corpus.py
runs them all once per case; the property tests beside (one pass, imprint, mutator) reuse the pieces."""
from __future__ import annotations

import copy
import json
import re
from typing import Any

import orjson

from instancetype_webhook.conformance.cases import case_settings, case_source
from instancetype_webhook.conformance.compare import first_difference
from instancetype_webhook.conformance.engine import verdict_answer
from instancetype_webhook.domxml import DomainError, domain_config, render_domain, vmi_from_vm, xml_equal
from instancetype_webhook.domxml.stored import render_stored_vm, stored_vm
from instancetype_webhook.kubevirt.causes import ExpandError
from instancetype_webhook.kubevirt.check_expand import Checked, check_and_expand, two_calls
from instancetype_webhook.kubevirt.configuration import settings_from_configuration
from instancetype_webhook.kubevirt.expand import expand
from instancetype_webhook.kubevirt.find import find_preference_spec
from instancetype_webhook.kubevirt.guest import guest_changes, preserve_guest
from instancetype_webhook.kubevirt.imprint import imprint_from_patch, patch_and_imprint, strip
from instancetype_webhook.kubevirt.mutator import mutate_vm
from instancetype_webhook.patch import make_patch
from tests.kit.conformance_io import source_for

# ---- one pass (check_and_expand) against two calls (validate_vm, then expand) ----------------------------

def same(one: Checked, two: Checked) -> None:
    assert one.verdict == two.verdict
    if two.error is None:
        assert one.error is None
        # byte for byte, key order included (the JSONPatch keeps the flat VM's order); the stdlib
        # encoder, since a VM may hold integers beyond orjson's 64 bits
        assert json.dumps(one.flat) == json.dumps(two.flat)
    else:
        assert one.flat is None and one.error is not None
        assert ((one.error.kind, one.error.message, one.error.causes)
                == (two.error.kind, two.error.message, two.error.causes))


def answers(vm: Any, source: Any, cluster: Any) -> tuple[Checked, Checked]:
    before = copy.deepcopy(vm)
    one = check_and_expand(vm, source, cluster)
    assert vm == before  # the input is never written
    return one, two_calls(vm, source, cluster)


# ---- the imprint: one walk against patch then imprint; strip then expand ---------------------------------

def same_bytes(received: Any, flat: Any) -> None:
    """Operations and imprint equal the two steps' as bytes (key order and JSON types included)."""
    ops, imprint = patch_and_imprint(received, flat)
    want_ops = make_patch(received, flat)
    assert orjson.dumps(ops) == orjson.dumps(want_ops)
    assert orjson.dumps(imprint) == orjson.dumps(imprint_from_patch(received, flat, want_ops))


def imprint_applies(case: dict) -> bool:
    """A case whose expected flat VM is expand's own (default configuration, no inference stage)."""
    return "vm" in case.get("expected", {}) and not case["input"].get("kubevirtConfiguration") \
        and "expectedInfer" not in case


def strip_then_expand(case: dict) -> None:
    """Stripping the imprint from the flat VM, then expanding (matchers put back), gives the same flat VM."""
    vm, source = case["input"]["vm"], source_for(case["input"])
    flat = expand(vm, source)
    imprint = imprint_from_patch(vm, flat, make_patch(vm, flat))
    stripped, edits = strip(flat, imprint)
    assert edits == []
    spec = stripped["spec"]
    for key in ("instancetype", "preference"):
        if key in vm["spec"]:
            spec[key] = vm["spec"][key]
    assert expand({**stripped, "status": vm.get("status", {})}, source) == flat


# ---- the VM mutator's instancetype stage -------------------------------------------------------------------

def stage(case: dict) -> Any:
    case_input = case["input"]
    old = case_input.get("oldVm") if case_input.get("operation") == "UPDATE" else None
    vm = copy.deepcopy(case_input["vm"])
    mutation = mutate_vm(vm, old, case_source(case_input), case_settings(case_input))
    assert vm == case_input["vm"], "the stage changed its input"
    return mutation


def infer_answer(case: dict) -> dict:
    """The stage's answer in `expectedInfer`'s shape: the verdict and the matchers it wrote."""
    mutation = stage(case)
    answer = verdict_answer(mutation.verdict)
    if mutation.vm is not None:
        answer.update({k: mutation.vm["spec"][k] for k in ("instancetype", "preference") if k in mutation.vm["spec"]})
    return answer


def mutate_answer(case: dict) -> dict:
    """The mutating webhook's answer in `expectedMutate`'s shape, its causes as the webhook reports them."""
    case_input = case["input"]
    old = case_input.get("oldVm") if case_input.get("operation") == "UPDATE" else None
    verdict = mutate_vm(copy.deepcopy(case_input["vm"]), old, case_source(case_input),
                        settings_from_configuration(case_input.get("kubevirtConfiguration"))).verdict
    out: dict = {"allowed": verdict.allowed}
    if not verdict.allowed:
        out.update(message=verdict.message, code=verdict.code, causes=[c.to_dict() for c in verdict.causes])
    return out


def after_the_stage(case: dict) -> None:
    """`expected`: the stage's refusal, or expanding the VM the stage leaves."""
    mutation, expected = stage(case), case["expected"]
    if mutation.vm is None:
        assert expected["kind"] == "mutate"
        assert (expected["error"], expected["status"]["code"]) == (mutation.verdict.message, mutation.verdict.code)
        return
    try:
        ours = {"vm": expand(mutation.vm, case_source(case["input"]), case_settings(case["input"]))}
    except ExpandError as exc:
        ours = {"kind": exc.kind, "error": exc.message}
    if "vm" in expected:
        assert "vm" in ours, ours
        assert first_difference(ours["vm"], expected["vm"], "vm") is None
    else:
        assert (ours.get("kind"), ours.get("error")) == (expected["kind"], expected["error"])


# ---- the guest: flattening keeps the referencing VM's domain, or warns (and --preserve-guest keeps it) ---------

GUEST_UID = "7f6e5d4c-0000-4000-8000-000000000001"


def guest_applies(case: dict) -> bool:
    """A case whose VM references something and is expanded as submitted (no mutator stage)."""
    spec = case["input"]["vm"].get("spec") or {}
    return "vm" in case["expected"] and bool(spec.get("instancetype") or spec.get("preference")) \
        and "expectedMutate" not in case and "expectedInfer" not in case


def stored_reference_flat(case: dict) -> tuple[Any, str, Any]:
    """The VM as stored, the domain of the referencing VM, and the flat VM (DomainError when it has no domain)."""
    case_input = case["input"]
    config = domain_config(case_input.get("kubevirtConfiguration"))
    source = source_for(case_input)
    stored = stored_vm(copy.deepcopy(case_input["vm"]), source, config)
    reference = render_stored_vm(copy.deepcopy(case_input["vm"]), source, "reference", config, uid=GUEST_UID)
    return stored, reference, expand(stored, source, config.settings)


def has_domain(case: dict) -> bool:
    try:
        stored_reference_flat(case)
    except DomainError:
        return False
    return True


def guest_kept(case: dict) -> None:
    """The flat VM's domain equals the referencing VM's exactly when there are no guest warnings, and
    --preserve-guest makes it equal. VMs the converter refuses here have no domain to compare (EFI without
    firmware, GPUs/host devices without the device plugin's PCI addresses): they must be refused for that."""
    case_input = case["input"]
    config = domain_config(case_input.get("kubevirtConfiguration"))
    try:
        stored, reference, flat = stored_reference_flat(case)
    except DomainError as exc:
        assert re.search("EFI OVMF roms missing|no device of resource", str(exc)), str(exc)
        return
    source, settings = source_for(case_input), config.settings
    preference = find_preference_spec(stored, source, settings.release)
    warnings = guest_changes(stored, flat, preference, settings)
    same, where = xml_equal(render_domain(vmi_from_vm(flat, uid=GUEST_UID), config=config), reference)
    assert same == (warnings == []), f"domain differs at {where} but warnings are {warnings}"
    kept = preserve_guest(stored, flat, preference, settings)
    equal, where = xml_equal(render_domain(vmi_from_vm(kept, uid=GUEST_UID), config=config), reference)
    assert equal, f"--preserve-guest: the flat VM's domain still differs at {where}"
