"""Reliability suite: hypothesis profiles and the shared server.

HYPOTHESIS_PROFILE=ci (default) keeps CI fast; HYPOTHESIS_PROFILE=long runs >= 100,000 examples of
the AdmissionReview fuzz test (see docs/operations/reliability.md). The profiles are applied as
decorators (`fuzz_settings(...)`), never loaded globally, so other suites keep their own settings.
"""
from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.kit.server import Server, serve

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
LONG = PROFILE == "long"
# examples per test in CI; the long mode's main fuzz test runs LONG_EXAMPLES
CI_EXAMPLES = int(os.environ.get("RELIABILITY_CI_EXAMPLES", "150"))
LONG_EXAMPLES = int(os.environ.get("RELIABILITY_LONG_EXAMPLES", "100000"))
_BASE = dict(deadline=None, database=None, print_blob=True,
             suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                    HealthCheck.function_scoped_fixture, HealthCheck.filter_too_much])


def fuzz_settings(ci: int = CI_EXAMPLES, long: int = LONG_EXAMPLES) -> settings:
    """Settings for one property test: `ci` examples normally, `long` under HYPOTHESIS_PROFILE=long."""
    return settings(max_examples=long if LONG else ci, **_BASE)


@pytest.fixture(scope="module")
def expand_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The real server (uvicorn, TLS, 127.0.0.1) under the expand policy on the bundled catalogue."""
    tmp: Path = tmp_path_factory.mktemp("reliability")
    with serve(tmp, "--policy", "expand") as server:
        yield server
