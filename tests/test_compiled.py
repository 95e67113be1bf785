"""instancetype_webhook/compiled.py and setup.py: which modules the compiled build compiles, the pure-Python install,
and a real
mypyc build (of one module: the image builds them all, and tests/ship/test_image.py checks its answers)."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from instancetype_webhook.compiled import build_summary, compiled_modules, has_extension, is_extension
from tests.kit.shared_data import ROOT

APP = ROOT / "instancetype_webhook"
# A patch's worth of differences (a replace, an add, a removal, list elements, a key that needs escaping).
OLD = {"spec": {"a": 1, "list": [1, 2, {"x": "y"}], "gone": True, "we~ird/key": 1}}
NEW = {"spec": {"a": 2, "list": [1, 2, {"x": "z"}, 4], "new": {"b": [None]}, "we~ird/key": 2}}


def test_the_pure_core_and_the_review_handlers_are_listed_and_exist():
    names = compiled_modules(APP)
    assert names == sorted(set(names))
    for name in names:
        assert (ROOT / Path(*name.split("."))).with_suffix(".py").is_file(), name
    core = {".".join(p.relative_to(ROOT).with_suffix("").parts) for tree in ("kubevirt", "domxml")
            for p in (APP / tree).rglob("*.py")}
    left_out = {name for name in core if name.rsplit(".", 1)[-1] in ("models", "objects", "__init__")}
    assert core - left_out <= set(names)  # every core module but the pydantic ones and package __init__s
    assert not left_out & set(names)
    expected = ("patch", "admission.mutate", "admission.validate", "admission.envelope", "server.asgi")
    assert {f"instancetype_webhook.{m}" for m in expected} <= set(names)
    # Nothing that is not pure data in, data out or a handler on it: no edge (HTTP app, sources, CLI, fleet).
    assert not [n for n in names if n.split(".")[1] in ("cli", "sources", "fleet", "playground")]
    assert "instancetype_webhook.server.app" not in names


def test_the_editable_install_runs_pure_python_with_no_stale_extension_in_the_tree():
    """An extension left in the source tree (setup.py build_ext --inplace) would shadow the .py beside it."""
    assert list(APP.rglob("*.so")) == [] and list(ROOT.glob("*__mypyc*")) == []
    assert build_summary() == "pure Python"
    assert not is_extension("instancetype_webhook.kubevirt.expand")
    assert not has_extension(APP, "instancetype_webhook.kubevirt.expand")


def build_wheel(tmp_path: Path, compile_what: str) -> subprocess.CompletedProcess[str]:
    """`pip wheel` as the image's build stage runs it, on a copy of what it copies (pip builds in the tree)."""
    source = tmp_path / "source"
    shutil.copytree(APP, source / "instancetype_webhook", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "setup.py", "README.md", "tools/mypyc.ini", "tools/compile-requirements.txt"):
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, source / name)
    env = {**os.environ, "INSTANCETYPE_WEBHOOK_COMPILE": compile_what}
    return subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                           "--wheel-dir", str(tmp_path / "wheels"), str(source)],
                          env=env, capture_output=True, text=True, timeout=600)


def test_a_module_that_is_not_listed_is_refused_by_name(tmp_path):
    built = build_wheel(tmp_path, "instancetype_webhook.patch,instancetype_webhook.server.app")
    assert built.returncode != 0
    assert "not among the modules compiled.py lists: instancetype_webhook.server.app" in built.stderr


@pytest.mark.slow
@pytest.mark.ci_tier  # a mypyc build (about a minute of a core): CI's make test-ci, beside the suites' compiled re-run
def test_a_compiled_build_imports_the_extension_and_answers_as_pure_python(tmp_path):
    built = build_wheel(tmp_path, "instancetype_webhook.patch")
    assert built.returncode == 0, built.stderr
    (wheel,) = (tmp_path / "wheels").glob("instancetype_webhook-*.whl")
    assert "-cp311-" in wheel.name  # a platform wheel: it carries a C extension
    names = zipfile.ZipFile(wheel).namelist()
    assert [n for n in names if n.startswith("instancetype_webhook/patch.") and n.endswith(".so")], names
    assert "instancetype_webhook/patch.py" in names  # the source stays beside it (tracebacks, inspection)
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target", str(target),
                    str(wheel)], check=True, capture_output=True, timeout=120)
    probe = f"""
import json, sys
from instancetype_webhook.compiled import build_summary, is_extension
from instancetype_webhook.patch import make_patch
old, new = json.loads({json.dumps(json.dumps([OLD, NEW]))})
print(json.dumps({{"extension": is_extension("instancetype_webhook.patch"), "summary": build_summary(),
                  "ops": make_patch(old, new), "file": sys.modules["instancetype_webhook.patch"].__file__}}))
"""
    env = {**os.environ, "PYTHONPATH": str(target)}
    out = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True,
                         check=True).stdout
    found = json.loads(out)
    assert found["extension"] is True and found["file"].startswith(str(target))
    assert found["summary"] == f"compiled with mypyc (1 of {len(compiled_modules(APP))} modules)"
    from instancetype_webhook.patch import make_patch

    assert found["ops"] == make_patch(OLD, NEW)  # the pure module's answer, here in this process


@pytest.mark.slow
@pytest.mark.ci_tier  # two mypyc builds of one module and a training run: CI's make test-ci
def test_the_profile_guided_build_trains_an_instrumented_build_then_builds_from_its_profile(tmp_path):
    """tools/build_wheel.py as the image's build stage runs it, on a copy of what the Dockerfile copies."""
    source = tmp_path / "source"
    shutil.copytree(APP, source / "instancetype_webhook", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "setup.py", "README.md", "tools/mypyc.ini", "tools/build_wheel.py",
                 "tools/pgo_train.py"):
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, source / name)
    env = {**os.environ, "INSTANCETYPE_WEBHOOK_COMPILE": "instancetype_webhook.patch"}
    built = subprocess.run([sys.executable, str(source / "tools" / "build_wheel.py"), "--wheel-dir",
                            str(tmp_path / "wheels")], cwd=tmp_path, env=env, capture_output=True, text=True,
                           timeout=900)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    assert re.search(r"pgo_train: \d+ reviews: .*/mutate 200 patched", built.stdout)  # the instrumented build ran
    (wheel,) = (tmp_path / "wheels").glob("instancetype_webhook-*.whl")
    assert built.stdout.strip().endswith(str(wheel))
    names = zipfile.ZipFile(wheel).namelist()
    assert [n for n in names if n.startswith("instancetype_webhook/patch.") and n.endswith(".so")], names
    assert not (source / "build").exists() or not list((source / "build").rglob("*.gcda"))  # no profile in the tree


def test_a_profile_flag_that_is_not_generate_or_use_stops_the_build(tmp_path):
    env = {**os.environ, "INSTANCETYPE_WEBHOOK_COMPILE": "instancetype_webhook.patch",
           "INSTANCETYPE_WEBHOOK_PGO": "fast"}
    built = subprocess.run([sys.executable, str(ROOT / "setup.py"), "--name"], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=300)
    assert built.returncode != 0 and "INSTANCETYPE_WEBHOOK_PGO: generate:DIR or use:DIR, not 'fast'" in built.stderr


def test_the_build_environment_pins_the_mypy_and_stubs_the_static_checks_pin():
    import tomllib

    test_extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["test"]
    build = [line.strip() for line in (ROOT / "tools" / "compile-requirements.txt").read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    checker = [r for r in build if r.startswith(("mypy", "types-"))]
    assert len(checker) == 4 and set(checker) <= set(test_extra)


def test_no_compiled_function_binds_one_name_to_exceptions_of_different_types():
    """mypyc gives an `except ... as name` variable the type of the function's first clause binding it: a later
    clause catching another type there raises TypeError in the compiled build (not in pure Python)."""
    import ast

    found = []
    for name in compiled_modules(APP):
        path = (ROOT / Path(*name.split("."))).with_suffix(".py")
        for function in ast.walk(ast.parse(path.read_text())):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            caught: dict[str, set[str]] = {}
            for node in ast.walk(function):
                if isinstance(node, ast.ExceptHandler) and node.name and node.type is not None:
                    caught.setdefault(node.name, set()).add(ast.unparse(node.type))
            found += [f"{path.relative_to(ROOT)} {function.name}: {n} {sorted(t)}"
                      for n, t in caught.items() if len(t) > 1]
    assert found == []


# The suites that exercise the compiled modules; tests/test_compiled.py's own run leaves out the libvirt tests
# (their tools are checked elsewhere) and those marked pure_python.
SUITES = ("tests/kubevirt", "tests/properties", "tests/test_patch.py", "tests/admission", "tests/server",
          "tests/domxml", "tests/cli", "tests/sources", "tests/fleet", "tests/conformance")
NOT_COPIED = shutil.ignore_patterns(".git", ".venv*", "__pycache__", "build", "site", "*.so", "*.egg-info",
                                    ".hypothesis", ".pytest_cache", ".mypy_cache", ".ruff_cache")


@pytest.mark.slow
@pytest.mark.ci_tier
@pytest.mark.timeout(2400)
def test_the_suites_pass_against_the_compiled_build(tmp_path):
    """All of compiled.py's modules compiled in a copy of the tree, then the core, server, CLI, source and
    fleet tests run against it: what mypyc changes (annotations checked at run time, compiled classes, the
    collector) shows here, not only on the conformance answers the image test compares."""
    tree = tmp_path / "tree"
    shutil.copytree(ROOT, tree, ignore=NOT_COPIED)
    env = {**os.environ, "INSTANCETYPE_WEBHOOK_COMPILE": "1", "PYTHONPATH": str(tree)}
    built = subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace"], cwd=tree, env=env,
                           capture_output=True, text=True, timeout=1200)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    code = "from instancetype_webhook.compiled import build_summary; print(build_summary())"
    summary = subprocess.run([sys.executable, "-c", code],
                             cwd=tree, env=env, capture_output=True, text=True, check=True).stdout.strip()
    count = len(compiled_modules(APP))
    assert summary == f"compiled with mypyc ({count} of {count} modules)"
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "auto", "-m",
                          "not libvirt and not pure_python", *SUITES], cwd=tree, env=env, capture_output=True,
                         text=True, timeout=1800)
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-3000:]
    assert " passed" in run.stdout and " failed" not in run.stdout
