"""The shape of the test tree (`make lint` runs it; exit 1 with one line per finding).

1. Tests mirror the package: every module of instancetype_webhook with behaviour of its own has its test file at
   tests/<package path>/test_<module>.py (pytest's importlib mode lets basenames repeat). The modules without
   behaviour of their own are listed in NO_BEHAVIOUR, each with the reason.
2. No test module imports another: what tests share lives in the test kit (tests/kit) or the fake API server
   (tests/fakeapi). Any other module under tests/ (a test_*.py, a conftest.py, a helper beside them) may import
   only those two, never a module of another test folder or a sibling.

    python tools/lint_tests.py [ROOT]
"""
from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

PACKAGE = "instancetype_webhook"
SHARED = ("tests.kit", "tests.fakeapi")  # what a test may import from tests/
# Modules whose behaviour is their parents' or nothing at all: no test file of their own.
NO_BEHAVIOUR = {
    "__main__.py": "two lines that call cli.main",
    "_version.py": "the version string (tests/ship/test_version.py checks it everywhere it is written)",
    "domxml/errors.py": "one exception class",
    "kubevirt/infer/errors.py": "the inference error messages, as constants",
}


def modules(root: Path) -> Iterator[Path]:
    """The package's modules with behaviour (relative to the package), package __init__ files left out."""
    base = root / PACKAGE
    for path in sorted(base.rglob("*.py")):
        rel = path.relative_to(base)
        if path.name != "__init__.py" and rel.as_posix() not in NO_BEHAVIOUR:
            yield rel


def mirror(rel: Path) -> Path:
    return Path("tests", *rel.parent.parts, f"test_{rel.stem}.py")


def missing_tests(root: Path) -> list[str]:
    return [f"{PACKAGE}/{rel.as_posix()}: no test file at {mirror(rel).as_posix()}"
            for rel in modules(root) if not (root / mirror(rel)).is_file()]


def _test_files(root: Path) -> Iterator[Path]:
    for path in sorted((root / "tests").rglob("*.py")):
        parts = path.relative_to(root).parts
        if parts[1] != "data" and "__pycache__" not in parts:
            yield path


def _dotted(root: Path, path: Path) -> str:
    return ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")


def _imported(tree: ast.AST, here: str) -> Iterator[tuple[int, str]]:
    package = here.rsplit(".", 1)[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            yield node.lineno, module
            for alias in node.names:  # `from tests.x import module`
                yield node.lineno, f"{module}.{alias.name}"


def _is_test_module(root: Path, dotted: str) -> bool:
    """True when `dotted` names a module under tests/ (a .py file there, not a package)."""
    return dotted.startswith("tests.") and (root / Path(*dotted.split("."))).with_suffix(".py").is_file()


def cross_imports(root: Path) -> list[str]:
    found = []
    for path in _test_files(root):
        here = _dotted(root, path)
        if here.startswith(SHARED):
            continue
        siblings = {p.stem for p in path.parent.glob("*.py")}
        for line, name in _imported(ast.parse(path.read_text(encoding="utf-8"), str(path)), here):
            target = name
            if name.split(".")[0] in siblings and not name.startswith("tests"):  # prepend-mode style: `import x`
                target = _dotted(root, path.parent / name.split(".")[0])
            if _is_test_module(root, target) and not target.startswith(SHARED) and target != here:
                found.append(f"{path.relative_to(root).as_posix()}:{line}: imports {target}: move what is shared "
                             f"into tests/kit (or tests/fakeapi)")
    return found


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent.parent
    findings = missing_tests(root) + list(dict.fromkeys(cross_imports(root)))
    for finding in findings:
        print(finding)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
