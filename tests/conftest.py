"""Shared fixtures: the ../shared data the project is checked against."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.shared_data import CONFORMANCE, ROOT, SHARED, conformance_cases  # noqa: F401  (re-exported)


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    return SHARED
