"""Where the ../shared data the project is checked against lives (import as `tests.shared_data`)."""
from __future__ import annotations

import json
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("INSTANCETYPE_WEBHOOK_SHARED", ROOT.parent / "shared"))
CONFORMANCE = SHARED / "conformance"


def conformance_cases() -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(CONFORMANCE.glob("*.json"))]
