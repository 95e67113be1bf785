"""The VM mutating webhook's answer (`expectedMutate`) for every public case that has one: the UPDATE-only
matcher check compares the new matchers with `oldVm`; a CREATE control is answered without it."""
from __future__ import annotations

import copy

from tests.kit.corpus_checks import mutate_answer as answer
from tests.kit.shared_data import conformance_cases

CASES = [case for case in conformance_cases() if "expectedMutate" in case]


def test_the_update_cases_are_there():
    assert len(CASES) >= 11 and any(c["input"].get("operation") == "UPDATE" for c in CASES)


def test_the_same_vm_is_refused_as_an_update_and_allowed_as_a_create():
    case = next(c for c in CASES if c["name"] == "update.preference.name-changed-revision-kept")
    assert not answer(case)["allowed"]
    create = copy.deepcopy(case)
    create["input"].pop("operation")
    assert answer(create) == {"allowed": True}
