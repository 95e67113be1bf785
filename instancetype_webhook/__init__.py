"""instancetype-webhook: KubeVirt instance types and preferences checked, flattened and previewed.

The public Python API (plain dicts in, plain dicts out)::

    from instancetype_webhook import expand, expand_vm_spec, validate_vm, render_domain, vmi_from_vm, load_catalog

    source = load_catalog()                      # the bundled common-instancetypes, or load_catalog("dir/")
    flat = expand(vm, source)                    # the flat VM, or raises ExpandError(kind, message, causes)
    printed = expand_vm_spec(vm, source)         # what expand-vm-spec answers: the same, as Go prints it
    verdict = validate_vm(vm, source)            # Verdict(allowed, message, code, causes, warnings)
    xml = render_domain(vmi_from_vm(flat))       # the libvirt domain XML virt-launcher would define
    ops = make_patch(vm, flat)                   # the minimal RFC 6902 patch between the two

Names are imported on first use, so `import instancetype_webhook` stays cheap for the server's start-up.
"""
from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_PUBLIC = {
    # expansion and validation (instancetype_webhook.kubevirt: the pure core)
    "expand": "instancetype_webhook.kubevirt.expand",
    "expand_vm_spec": "instancetype_webhook.kubevirt.expand",
    "validate_vm": "instancetype_webhook.kubevirt.admission",
    "admit_object": "instancetype_webhook.kubevirt.admission",
    "validate_matchers": "instancetype_webhook.kubevirt.matchers",
    "ClusterSettings": "instancetype_webhook.kubevirt.settings",
    "DEFAULT_SETTINGS": "instancetype_webhook.kubevirt.settings",
    "Cause": "instancetype_webhook.kubevirt.causes",
    "ExpandError": "instancetype_webhook.kubevirt.causes",
    "Verdict": "instancetype_webhook.kubevirt.causes",
    "Source": "instancetype_webhook.kubevirt.source",
    "InMemorySource": "instancetype_webhook.kubevirt.source",
    # reference sources
    "load_catalog": "instancetype_webhook.sources.catalog",
    # the domain XML generator
    "render_domain": "instancetype_webhook.domxml",
    "vmi_from_vm": "instancetype_webhook.domxml",
    "DomainError": "instancetype_webhook.domxml",
    # JSON Patch
    "make_patch": "instancetype_webhook.patch",
}

__all__ = sorted(_PUBLIC) + ["__version__"]


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module instancetype_webhook has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
