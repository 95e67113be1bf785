"""instancetype-webhook: KubeVirt instance types and preferences checked, flattened and previewed.

The public Python API is re-exported here as its pieces land.
"""
__version__ = "0.1.0"

_EXPAND_API = {
    "expand": "app.kubevirt.expand",
    "ExpandError": "app.kubevirt.causes",
    "ClusterSettings": "app.kubevirt.settings",
    "InMemorySource": "app.kubevirt.source",
}


def __getattr__(name: str):  # the expansion API, imported on first use
    if name in _EXPAND_API:
        import importlib

        return getattr(importlib.import_module(_EXPAND_API[name]), name)
    raise AttributeError(f"module 'app' has no attribute {name!r}")
