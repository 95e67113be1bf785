"""Where the data the project is checked against lives (import as `tests.kit.shared_data`).

The tests read the in-tree copy, tests/data/shared/ (same layout as the team's shared/ folder), so a
fresh clone tests itself. `make sync-shared` (tools/sync_shared.py) refreshes the copy from ../shared;
tests/test_shared_copies.py checks that the two are equal whenever ../shared exists.
"""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
SHARED = ROOT / "tests" / "data" / "shared"  # the in-tree copy: what every test reads
CONFORMANCE = SHARED / "conformance"


def _load_sync_tool():
    spec = importlib.util.spec_from_file_location("sync_shared", ROOT / "tools" / "sync_shared.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("sync_shared", module)
    spec.loader.exec_module(module)
    return module


sync_tool = _load_sync_tool()


def original_shared() -> Path | None:
    """The shared/ folder the copy mirrors ($INSTANCETYPE_WEBHOOK_SHARED or ../shared), None in a user's clone."""
    return sync_tool.find_shared(ROOT)


def conformance_cases() -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(CONFORMANCE.glob("*.json"))]
