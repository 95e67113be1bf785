"""The VM mutating webhook's answer (`expectedMutate`) for every public case that has one: the UPDATE-only
matcher check compares the new matchers with `oldVm`; a CREATE control is answered without it."""
from __future__ import annotations

import copy

import pytest

from instancetype_webhook.conformance.cases import case_source as source_for
from instancetype_webhook.kubevirt.configuration import settings_from_configuration
from instancetype_webhook.kubevirt.mutator import mutate_vm
from tests.shared_data import conformance_cases

CASES = [case for case in conformance_cases() if "expectedMutate" in case]


def answer(case: dict) -> dict:
    case_input = case["input"]
    old = case_input.get("oldVm") if case_input.get("operation") == "UPDATE" else None
    verdict = mutate_vm(copy.deepcopy(case_input["vm"]), old, source_for(case_input),
                        settings_from_configuration(case_input.get("kubevirtConfiguration"))).verdict
    out: dict = {"allowed": verdict.allowed}
    if not verdict.allowed:
        out.update(message=verdict.message, code=verdict.code, causes=[c.to_dict() for c in verdict.causes])
    return out


def test_the_update_cases_are_there():
    assert len(CASES) >= 11 and any(c["input"].get("operation") == "UPDATE" for c in CASES)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_expected_mutate(case):
    assert answer(case) == case["expectedMutate"]


def test_the_same_vm_is_refused_as_an_update_and_allowed_as_a_create():
    case = next(c for c in CASES if c["name"] == "update.preference.name-changed-revision-kept")
    assert not answer(case)["allowed"]
    create = copy.deepcopy(case)
    create["input"].pop("operation")
    assert answer(create) == {"allowed": True}
