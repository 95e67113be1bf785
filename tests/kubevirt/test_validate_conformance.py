"""Every public conformance case: `expectedValidate.instancetype` through validate_vm (after the mutator when
the case has `expectedInfer`/`expectedMutate`)."""
import pytest

from instancetype_webhook.conformance.engine import check_validate
from tests.conftest import CONFORMANCE, conformance_cases

CASES = conformance_cases()


def test_the_public_corpus_is_present():
    assert len(CASES) == len(list(CONFORMANCE.glob("*.json"))) >= 206


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_validate_matches_upstream(case):
    assert check_validate(case) is None
