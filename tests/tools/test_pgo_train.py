"""tools/pgo_train.py: the profile-guided build's training run sends the review path's everyday work (patches,
refusals, allowed reviews, rejected bodies) to both endpoints, and nothing fails on the way."""
from __future__ import annotations

import re
import subprocess
import sys

from tests.kit.shared_data import ROOT


def test_the_training_reaches_every_kind_of_answer_on_both_endpoints(tmp_path):
    run = subprocess.run([sys.executable, str(ROOT / "tools" / "pgo_train.py"), "--rounds", "1"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    summary = run.stdout.strip()
    counts = {key: int(count) for key, count in re.findall(r"(/\w+ \d+ \w+): (\d+)", summary)}
    total = int(re.match(r"pgo_train: (\d+) reviews", summary).group(1))
    assert sum(counts.values()) == total > 500
    for endpoint in ("/mutate", "/validate"):
        assert counts[f"{endpoint} 200 denied"] > 50  # a conflict with each instance type
        assert counts[f"{endpoint} 400 rejected"] == 2  # a review without its fields, a body that is not JSON
    assert counts["/mutate 200 patched"] > 200 and counts["/validate 200 allowed"] > 200
    assert not [key for key in counts if key.split()[1] not in ("200", "400")]  # no 500: nothing crashed
