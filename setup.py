"""The build's one option: compile the review path with mypyc (INSTANCETYPE_WEBHOOK_COMPILE=1).

INSTANCETYPE_WEBHOOK_COMPILE is unset or 0 (pure Python), 1 (every module of instancetype_webhook.compiled),
or a comma-separated list of those modules' names (a quick build of a few, e.g.
instancetype_webhook.patch,instancetype_webhook.kubevirt.imprint).

Without it (the editable install of `make install`, `pip install .`) the package is pure Python. With it, the
wheel carries C extensions for the pure core (instancetype_webhook/kubevirt, instancetype_webhook/domxml,
instancetype_webhook/patch.py) and the server's review handlers beside the same .py files, which CPython then
imports instead: the same code and answers,
about 40% less CPU time per review (bench/README.md). The image's build stage builds this wheel; it needs
mypy (which brings mypyc), setuptools >= 77 and a C compiler with the Python headers.

The modules compiled are listed in instancetype_webhook/compiled.py (COMPILED), which also tells at run time which are.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

from setuptools import setup

ROOT = Path(__file__).resolve().parent


def compiled_sources(wanted: str) -> list[str]:
    """The .py files to compile, relative to the project: instancetype_webhook.compiled's list (read without
    importing the package), or the part of it `wanted` names."""
    namespace: dict[str, object] = {}
    exec((ROOT / "instancetype_webhook" / "compiled.py").read_text(), namespace)
    modules: list[str] = namespace["compiled_modules"](ROOT / "instancetype_webhook")  # type: ignore[operator]
    if wanted != "1":
        names = [name.strip() for name in wanted.split(",") if name.strip()]
        unknown = sorted(set(names) - set(modules))
        if unknown:
            listed = "not among the modules compiled.py lists"
            sys.exit(f"INSTANCETYPE_WEBHOOK_COMPILE: {listed}: {', '.join(unknown)}")
        modules = [name for name in modules if name in names]
    return [str(Path(*name.split(".")).with_suffix(".py")) for name in modules]


def ext_modules() -> list[object]:
    wanted = os.environ.get("INSTANCETYPE_WEBHOOK_COMPILE", "").strip()
    if wanted in ("", "0"):
        return []
    compile_args, link_args = pgo_flags(os.environ.get("INSTANCETYPE_WEBHOOK_PGO", "").strip())
    try:
        from mypyc.build import mypycify
    except ImportError:
        sys.exit("INSTANCETYPE_WEBHOOK_COMPILE=1 needs mypy (mypyc) in the build environment: "
                 "pip install -r tools/compile-requirements.txt, then pip wheel --no-build-isolation .")
    # mypyc.ini, not pyproject's [tool.mypy]: its per-module sections name modules mypyc is not given,
    # which warn_unused_configs reports and mypyc treats as an error.
    os.chdir(ROOT)  # mypycify names modules by their paths from here
    extensions = list(mypycify(["--config-file", "tools/mypyc.ini", *compiled_sources(wanted)], opt_level="3"))
    for extension in extensions:
        extension.extra_compile_args = [*extension.extra_compile_args, *compile_args]
        extension.extra_link_args = [*extension.extra_link_args, *link_args]
    return extensions


def pgo_flags(pgo: str) -> tuple[list[str], list[str]]:
    """GCC's profile-guided optimisation (tools/build_wheel.py runs the three steps): INSTANCETYPE_WEBHOOK_PGO is
    `generate:DIR` (an instrumented build that writes its profile under DIR when it runs), `use:DIR` (a build laid
    out from that profile; code the training did not run keeps its usual optimisation), or unset."""
    if not pgo:
        return [], []
    step, _, directory = pgo.partition(":")
    if step not in ("generate", "use") or not directory:
        sys.exit(f"INSTANCETYPE_WEBHOOK_PGO: generate:DIR or use:DIR, not {pgo!r}")
    if step == "generate":
        return ["-fprofile-generate", f"-fprofile-dir={directory}"], ["-fprofile-generate"]
    return ["-fprofile-use", f"-fprofile-dir={directory}", "-fprofile-partial-training", "-Wno-missing-profile"], []


# All of them: about 1 min 50 s on one core (mypy's analysis, then one C file for the group: more cores do not help).
setup(ext_modules=ext_modules())
