"""Every public conformance case: `expectedValidate.instancetype` through validate_vm."""
import pytest

from app.conformance import check_validate
from tests.conftest import conformance_cases

CASES = conformance_cases()


def test_the_public_corpus_is_present():
    assert len(CASES) == 149


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_validate_matches_upstream(case):
    assert check_validate(case) is None
