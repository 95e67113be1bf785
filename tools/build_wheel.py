"""Build the project's wheel as the image ships it: compiled with mypyc and laid out by GCC from a profile of the
review path (profile-guided optimisation). Run from the project's root by the build environment's Python (the
runtime dependencies and tools/compile-requirements.txt installed), as the image's build stage and
`make install-compiled` do:

    python tools/build_wheel.py --wheel-dir DIR [--no-pgo]

With INSTANCETYPE_WEBHOOK_COMPILE=1 (the default here; or a list of modules, as setup.py takes it): an
instrumented build, unpacked in a temporary directory and run on tools/pgo_train.py's reviews with this
environment's dependencies, then the build that DIR receives, compiled from that
profile (setup.py's INSTANCETYPE_WEBHOOK_PGO). The profile moves no answer: the same C code, laid out for the
paths the training took (bench/README.md has what it is worth). `--no-pgo`: one compiled build, no training.
With INSTANCETYPE_WEBHOOK_COMPILE=0: the pure-Python wheel. Standard library only.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def pip_wheel(wheel_dir: Path, **env: str) -> Path:
    """`pip wheel .` of the tree (built in ./build, removed first so that nothing of another build is reused)."""
    shutil.rmtree(ROOT / "build", ignore_errors=True)
    for old in wheel_dir.glob("instancetype_webhook-*.whl"):
        old.unlink()
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-build-isolation", "--no-deps",
                    "--wheel-dir", str(wheel_dir), "."], cwd=ROOT, env={**os.environ, **env}, check=True)
    (wheel,) = sorted(wheel_dir.glob("instancetype_webhook-*.whl"))
    return wheel


def train(wheel: Path, work: Path) -> None:
    """Run the training reviews through the instrumented wheel, unpacked beside this environment's dependencies
    (nothing is installed into it); the profile is written when the process exits."""
    site = work / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), str(wheel)],
                   check=True)
    # run from `work`, away from the tree: the instrumented package is the one imported
    subprocess.run([sys.executable, str(ROOT / "tools" / "pgo_train.py")], cwd=work,
                   env={**os.environ, "PYTHONPATH": str(site)}, check=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wheel-dir", type=Path, required=True, help="where the wheel goes")
    parser.add_argument("--no-pgo", action="store_true", help="compile once, without a profile")
    args = parser.parse_args(argv)
    args.wheel_dir.mkdir(parents=True, exist_ok=True)
    compiled = os.environ.get("INSTANCETYPE_WEBHOOK_COMPILE", "1").strip() or "1"
    if compiled == "0" or args.no_pgo:
        print(pip_wheel(args.wheel_dir, INSTANCETYPE_WEBHOOK_COMPILE=compiled))
        return 0
    with tempfile.TemporaryDirectory() as work:
        profile, instrumented = Path(work) / "profile", Path(work) / "instrumented"
        train(pip_wheel(instrumented, INSTANCETYPE_WEBHOOK_COMPILE=compiled,
                        INSTANCETYPE_WEBHOOK_PGO=f"generate:{profile}"), Path(work))
        if not any(profile.rglob("*.gcda")):
            sys.exit(f"build_wheel: the training wrote no profile under {profile}")
        print(pip_wheel(args.wheel_dir, INSTANCETYPE_WEBHOOK_COMPILE=compiled,
                        INSTANCETYPE_WEBHOOK_PGO=f"use:{profile}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
