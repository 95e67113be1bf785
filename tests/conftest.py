"""Shared fixtures: the ../shared data the project is checked against."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("INSTANCETYPE_WEBHOOK_SHARED", ROOT.parent / "shared"))
CONFORMANCE = SHARED / "conformance"


def conformance_cases() -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(CONFORMANCE.glob("*.json"))]


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    return SHARED
