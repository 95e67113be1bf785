"""Skipping a test that needs something the machine lacks: one line naming what to install.

Under CI=true no skip is allowed: tests/conftest.py fails the run and lists the skipped tests, so CI
proves every part ran (.ci/run installs everything these name).
"""
from __future__ import annotations

import os
import shutil

import pytest


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def skip_missing(what: str, install: str) -> None:
    """Skip the calling test: `what` is missing, `install` says how to get it (one line)."""
    pytest.skip(f"needs {what}; install: {install}")


def need_command(name: str, install: str) -> str:
    """The path of command `name`, or skip the test naming how to install it."""
    path = shutil.which(name)
    if path is None:
        skip_missing(f"`{name}`", install)
    return path
