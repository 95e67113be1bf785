"""tools/lint_tests.py: tests mirror the package, and no test module imports another."""
from __future__ import annotations

import importlib.util
from pathlib import Path

from tests.kit.shared_data import ROOT

_spec = importlib.util.spec_from_file_location("lint_tests", ROOT / "tools" / "lint_tests.py")
assert _spec is not None and _spec.loader is not None
lint = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(lint)


def _tree(tmp: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp


def test_a_module_without_its_mirror_test_is_reported(tmp_path):
    root = _tree(tmp_path, {"instancetype_webhook/__init__.py": "", "instancetype_webhook/core/__init__.py": "",
                            "instancetype_webhook/core/thing.py": "X = 1\n",
                            "instancetype_webhook/core/other.py": "Y = 2\n",
                            "instancetype_webhook/_version.py": "__version__ = '0'\n",
                            "tests/core/test_other.py": "def test_y():\n    pass\n"})
    assert lint.missing_tests(root) == [
        "instancetype_webhook/core/thing.py: no test file at tests/core/test_thing.py"]


def test_importing_another_test_module_is_reported_and_the_kit_is_not(tmp_path):
    root = _tree(tmp_path, {
        "instancetype_webhook/__init__.py": "",
        "tests/kit/helpers.py": "def h():\n    pass\n",
        "tests/fakeapi/apiserver.py": "class FakeAPIServer:\n    pass\n",
        "tests/a/test_one.py": "from tests.kit.helpers import h\nfrom tests.fakeapi.apiserver import FakeAPIServer\n",
        "tests/a/test_two.py": "from tests.a.test_one import h\n",
        "tests/a/helper.py": "X = 1\n",
        "tests/a/test_three.py": "import helper\nfrom . import helper as h2\n",
        "tests/b/conftest.py": "from tests.a import helper\n",
    })
    found = lint.cross_imports(root)
    assert found == [
        "tests/a/test_three.py:1: imports tests.a.helper: move what is shared into tests/kit (or tests/fakeapi)",
        "tests/a/test_three.py:2: imports tests.a.helper: move what is shared into tests/kit (or tests/fakeapi)",
        "tests/a/test_two.py:1: imports tests.a.test_one: move what is shared into tests/kit (or tests/fakeapi)",
        "tests/b/conftest.py:1: imports tests.a.helper: move what is shared into tests/kit (or tests/fakeapi)",
    ]
    assert lint.main(["lint_tests.py", str(root)]) == 1


def test_a_clean_tree_passes(tmp_path):
    root = _tree(tmp_path, {"instancetype_webhook/__init__.py": "", "instancetype_webhook/thing.py": "X = 1\n",
                            "tests/test_thing.py": "from tests.kit.x import y\n", "tests/kit/x.py": "y = 1\n"})
    assert lint.main(["lint_tests.py", str(root)]) == 0
