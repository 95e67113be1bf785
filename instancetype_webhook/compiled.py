"""Which modules the compiled build (mypyc) turns into C extensions, and which of them this process runs compiled.

The pure core (kubevirt, domxml, patch.py), the admission decision (admission/), the body reader and the
ASGI door that calls them, less the pydantic models (mypyc does not compile pydantic classes) and the package `__init__`
files. The review log and the metrics stay Python: their classes extend logging's and prometheus_client's,
which a compiled class cannot do safely (a compiled server.logs crashed the garbage collector). setup.py
reads this file without importing the package; the pure-Python install runs the same modules as .py files.
"""
from __future__ import annotations

import importlib
import importlib.machinery
from pathlib import Path

TREES = ("kubevirt", "domxml", "admission")
FILES = ("patch.py", "httpbody.py")
SERVER = ("asgi", "reviewlog")
LEFT_OUT = ("models.py", "objects.py", "__init__.py")


def compiled_modules(app_dir: Path) -> list[str]:
    """The dotted names of the modules the compiled build compiles, sorted, from the tree at `app_dir`."""
    paths = [p for tree in TREES for p in (app_dir / tree).rglob("*.py") if p.name not in LEFT_OUT]
    paths += [app_dir / name for name in FILES]
    paths += [app_dir / "server" / f"{name}.py" for name in SERVER]
    return sorted(".".join(("instancetype_webhook", *p.relative_to(app_dir).with_suffix("").parts)) for p in paths)


def is_extension(module: str) -> bool:
    """True when `module` is imported from a C extension (a compiled build), not from its .py file."""
    origin = getattr(importlib.import_module(module), "__file__", None) or ""
    return origin.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))


def has_extension(app_dir: Path, module: str) -> bool:
    """True when the installed tree holds a C extension for `module` (which the import system prefers to
    the .py file beside it), without importing it."""
    *parents, stem = module.split(".")[1:]
    folder = app_dir.joinpath(*parents)
    return any((folder / f"{stem}{suffix}").is_file() for suffix in importlib.machinery.EXTENSION_SUFFIXES)


def build_summary() -> str:
    """One line for --version and the server's start: how much of the review path runs compiled."""
    app_dir = Path(__file__).resolve().parent
    names = compiled_modules(app_dir)
    done = sum(has_extension(app_dir, name) for name in names)
    if not done:
        return "pure Python"
    return f"compiled with mypyc ({done} of {len(names)} modules)"
