"""Every public conformance case, decided once through the library: one test per case asserts all that the
separate corpus tests asserted (the real server's run of the corpus is tests/server/test_conformance.py).

Per case, as it applies:
- expand: `expected` (semantically), or the runner's check_expand after the mutator stage; the input unchanged;
- validate: `expectedValidate.instancetype` through validate_vm (check_validate);
- one pass: check_and_expand answers exactly as validate_vm then expand (verdict, flat VM byte for byte, error);
- imprint: the one walk (patch_and_imprint) equals make_patch then imprint_from_patch as bytes; stripping the
  imprint from the flat VM and expanding again gives the same flat VM;
- mutator: `expectedInfer`, `expectedMutate` (two ways: the verdict answer and the webhook's causes), and
  `expected` after the stage;
- guest: the flat VM's domain equals the referencing VM's exactly when flattening warns of no guest change,
  and --preserve-guest makes it equal (or the converter refuses a VM it has no domain for, for that reason);
- domxml: the case's `domxml.expected` and `domxml.fromVm` libvirt domains (the runner's domxml plugin).
"""
from __future__ import annotations

import copy

import pytest

from instancetype_webhook.conformance.cases import case_settings, case_source, case_vm, goes_through_mutator
from instancetype_webhook.conformance.domxml import check_expected, check_from_vm
from instancetype_webhook.conformance.engine import check_expand, check_validate, verdict_answer
from tests.kit.conformance_io import expand_outcome, outcome_difference
from tests.kit.corpus_checks import (
    after_the_stage,
    answers,
    guest_applies,
    guest_kept,
    imprint_applies,
    infer_answer,
    mutate_answer,
    same,
    same_bytes,
    stage,
    strip_then_expand,
)
from tests.kit.shared_data import CONFORMANCE, conformance_cases

CASES = conformance_cases()


def test_the_public_corpus_is_there():
    assert len(CASES) == len(list(CONFORMANCE.glob("*.json"))) >= 206


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_the_case_is_decided_as_upstream(case):
    before = copy.deepcopy(case["input"])
    if goes_through_mutator(case):
        assert check_expand(case) is None
    else:
        assert outcome_difference(expand_outcome(case), case["expected"]) is None
    assert case["input"] == before, "expand changed its input"

    assert check_validate(case) is None

    same(*answers(case_vm(case), case_source(case["input"]), case_settings(case["input"])))

    if imprint_applies(case):
        same_bytes(case["input"]["vm"], case["expected"]["vm"])
        strip_then_expand(case)

    if "expectedInfer" in case:
        assert infer_answer(case) == case["expectedInfer"]
    if "expectedMutate" in case:
        assert verdict_answer(stage(case).verdict) == case["expectedMutate"]
        assert mutate_answer(case) == case["expectedMutate"]
    if "expectedInfer" in case or "expectedMutate" in case:
        after_the_stage(case)

    if guest_applies(case):
        guest_kept(case)

    if "domxml" in case:
        diff = check_expected(case)
        assert diff is None, str(diff)
        if "fromVm" in case["domxml"]:
            diff = check_from_vm(case)
            assert diff is None, str(diff)
