"""Every public conformance case: expanding `input.vm` gives `expected` (semantically).

Cases with `expectedInfer`/`expectedMutate` expand the VM the mutator leaves (the runner's check_expand)."""
from __future__ import annotations

import copy

import pytest

from instancetype_webhook.conformance.cases import goes_through_mutator
from instancetype_webhook.conformance.engine import check_expand
from tests.conftest import CONFORMANCE, conformance_cases
from tests.kubevirt.conformance_io import expand_outcome, outcome_difference

CASES = conformance_cases()


def test_the_public_corpus_is_there():
    assert len(CASES) == len(list(CONFORMANCE.glob("*.json"))) >= 206


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_expand_matches_upstream(case):
    if goes_through_mutator(case):
        assert check_expand(case) is None
    else:
        assert outcome_difference(expand_outcome(case), case["expected"]) is None


@pytest.mark.parametrize("case", CASES[::7], ids=[c["name"] for c in CASES[::7]])
def test_expand_never_mutates_its_input(case):
    before = copy.deepcopy(case["input"])
    expand_outcome(case)
    assert case["input"] == before
