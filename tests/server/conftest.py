"""Fixtures shared by the server tests."""
from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest


@pytest.fixture
def api(cluster) -> Iterator[httpx.Client]:
    """A client of the fake API server of the module's `cluster` fixture (fake, server)."""
    fake, _ = cluster
    with httpx.Client(base_url=fake.url, timeout=15) as client:
        yield client
