"""Reliability suite: the shared server (the Hypothesis settings are tests/kit/fuzz.py)."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.kit.server import Server, serve


@pytest.fixture(scope="module")
def expand_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The real server (uvicorn, TLS, 127.0.0.1) under the expand policy on the bundled catalogue."""
    tmp: Path = tmp_path_factory.mktemp("reliability")
    with serve(tmp, "--policy", "expand") as server:
        yield server
