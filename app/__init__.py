"""instancetype-webhook: KubeVirt instance types and preferences checked, flattened and previewed.

The public Python API is re-exported here as its pieces land.
"""
__version__ = "0.1.0"
