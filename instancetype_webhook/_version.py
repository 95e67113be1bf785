"""The project's version: the one place it is written (pyproject, the chart, the manifests and the docs follow it;
tools/version.py sets it everywhere)."""
__version__ = "0.1.0"
