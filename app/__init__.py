"""instancetype-webhook: KubeVirt instance types and preferences checked, flattened and previewed.

The public Python API (plain dicts in, plain dicts out)::

    from app import expand, expand_vm_spec, validate_vm, render_domain, vmi_from_vm, load_catalog

    source = load_catalog()                      # the bundled common-instancetypes, or load_catalog("dir/")
    flat = expand(vm, source)                    # the flat VM, or raises ExpandError(kind, message, causes)
    printed = expand_vm_spec(vm, source)         # what expand-vm-spec answers: the same, as Go prints it
    verdict = validate_vm(vm, source)            # Verdict(allowed, message, code, causes, warnings)
    xml = render_domain(vmi_from_vm(flat))       # the libvirt domain XML virt-launcher would define
    ops = make_patch(vm, flat)                   # the minimal RFC 6902 patch between the two

Names are imported on first use, so `import app` stays cheap for the server's start-up.
"""
from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_PUBLIC = {
    # expansion and validation (app.kubevirt: the pure core)
    "expand": "app.kubevirt.expand",
    "expand_vm_spec": "app.kubevirt.expand",
    "validate_vm": "app.kubevirt.admission",
    "admit_object": "app.kubevirt.admission",
    "validate_matchers": "app.kubevirt.matchers",
    "ClusterSettings": "app.kubevirt.settings",
    "DEFAULT_SETTINGS": "app.kubevirt.settings",
    "Cause": "app.kubevirt.causes",
    "ExpandError": "app.kubevirt.causes",
    "Verdict": "app.kubevirt.causes",
    "Source": "app.kubevirt.source",
    "InMemorySource": "app.kubevirt.source",
    # reference sources
    "load_catalog": "app.sources.catalog",
    # the domain XML generator
    "render_domain": "app.domxml",
    "vmi_from_vm": "app.domxml",
    "DomainError": "app.domxml",
    # JSON Patch
    "make_patch": "app.patch",
}

__all__ = sorted(_PUBLIC) + ["__version__"]


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'app' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
