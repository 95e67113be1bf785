#!/usr/bin/env python3
"""Print pyproject.toml's runtime dependencies, one requirement per line (for `pip install -r`).

The compiled build installs them before building (mypyc checks the code against them): the Dockerfile's
build stage and `make install-compiled`. Standard library only; run from the project's root.
"""
import sys
import tomllib
from pathlib import Path

with (Path(sys.argv[1]) if len(sys.argv) > 1 else Path("pyproject.toml")).open("rb") as project:
    print("\n".join(tomllib.load(project)["project"]["dependencies"]))
