"""tools/gen_models.py regenerates kubevirt/models.py from the in-tree CRD copy, with no argument and
nothing beside the clone."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_gen_models_defaults_to_the_in_tree_crds_and_reproduces_the_models():
    out = subprocess.run([sys.executable, "tools/gen_models.py"], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout == (ROOT / "instancetype_webhook" / "kubevirt" / "models.py").read_text()
