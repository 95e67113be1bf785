"""Test modules have unique basenames: pytest's default (prepend) import mode imports each as a top-level
module, so two `test_x.py` in different folders stop the whole run at collection ("import file mismatch")."""
from collections import Counter

from tests.shared_data import ROOT


def test_test_module_basenames_are_unique():
    names = Counter(p.name for p in (ROOT / "tests").rglob("test_*.py") if "data" not in p.relative_to(ROOT).parts)
    assert [name for name, count in names.items() if count > 1] == []
