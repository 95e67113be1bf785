"""Hypothesis settings for the reliability suite (tests/reliability): HYPOTHESIS_PROFILE=ci (default) keeps CI fast;
HYPOTHESIS_PROFILE=long runs >= 100,000 examples of the AdmissionReview fuzz test (docs/operations/reliability.md).
Applied as decorators (`fuzz_settings(...)`), never loaded globally, so other suites keep their own settings."""
from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
LONG = PROFILE == "long"
# examples per test in CI; the long mode's main fuzz test runs LONG_EXAMPLES
CI_EXAMPLES = int(os.environ.get("RELIABILITY_CI_EXAMPLES", "150"))
LONG_EXAMPLES = int(os.environ.get("RELIABILITY_LONG_EXAMPLES", "100000"))
BASE = dict(deadline=None, database=None, print_blob=True,
             suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                    HealthCheck.function_scoped_fixture, HealthCheck.filter_too_much])


def fuzz_settings(ci: int = CI_EXAMPLES, long: int = LONG_EXAMPLES) -> settings:
    """Settings for one property test: `ci` examples normally, `long` under HYPOTHESIS_PROFILE=long."""
    return settings(max_examples=long if LONG else ci, **BASE)
