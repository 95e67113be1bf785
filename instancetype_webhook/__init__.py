"""instancetype-webhook: KubeVirt instance types and preferences checked, flattened and previewed.

The public Python API (plain dicts in, plain dicts out)::

    from instancetype_webhook import expand, expand_vm_spec, validate_vm, render_domain, vmi_from_vm, load_catalog

    source = load_catalog()                      # the bundled common-instancetypes, or load_catalog("dir/")
    flat = expand(vm, source)                    # the flat VM, or raises ExpandError(kind, message, causes)
    printed = expand_vm_spec(vm, source)         # what expand-vm-spec answers: the same, as Go prints it
    verdict = validate_vm(vm, source)            # Verdict(allowed, message, code, causes, warnings)
    xml = render_domain(vmi_from_vm(flat))       # the libvirt domain XML virt-launcher would define
    ops = make_patch(vm, flat)                   # the minimal RFC 6902 patch between the two
    answer = answer_vm(vm, None, "CREATE", "default", ReviewContext(source, policy="expand"))  # what /mutate does

Every name below is typed (the package ships `py.typed`); they are imported on first use, so
`import instancetype_webhook` stays cheap for the server's start-up.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from instancetype_webhook._version import __version__

if TYPE_CHECKING:  # what a type checker sees; at run time the same names load on first use (below)
    from instancetype_webhook.admission.answer import VMAnswer
    from instancetype_webhook.admission.context import ReviewContext
    from instancetype_webhook.admission.mutate import answer_vm
    from instancetype_webhook.admission.policy import Policy
    from instancetype_webhook.domxml import DomainError, render_domain, vmi_from_vm
    from instancetype_webhook.kubevirt.causes import Cause, ExpandError, Verdict
    from instancetype_webhook.kubevirt.configuration import DEFAULT_SETTINGS, ClusterSettings
    from instancetype_webhook.kubevirt.expand import expand, expand_vm_spec
    from instancetype_webhook.kubevirt.matchers import validate_matchers
    from instancetype_webhook.kubevirt.source import InMemorySource, Source
    from instancetype_webhook.kubevirt.vm_webhook import admit_object, validate_vm
    from instancetype_webhook.patch import make_patch
    from instancetype_webhook.sources.catalog import load_catalog

_PUBLIC = {
    # expansion and validation (the pure core)
    "expand": "instancetype_webhook.kubevirt.expand",
    "expand_vm_spec": "instancetype_webhook.kubevirt.expand",
    "validate_vm": "instancetype_webhook.kubevirt.vm_webhook",
    "admit_object": "instancetype_webhook.kubevirt.vm_webhook",
    "validate_matchers": "instancetype_webhook.kubevirt.matchers",
    "ClusterSettings": "instancetype_webhook.kubevirt.configuration",
    "DEFAULT_SETTINGS": "instancetype_webhook.kubevirt.configuration",
    "Cause": "instancetype_webhook.kubevirt.causes",
    "ExpandError": "instancetype_webhook.kubevirt.causes",
    "Verdict": "instancetype_webhook.kubevirt.causes",
    "Source": "instancetype_webhook.kubevirt.source",
    "InMemorySource": "instancetype_webhook.kubevirt.source",
    # the admission decision (what /mutate answers, with no HTTP)
    "answer_vm": "instancetype_webhook.admission.mutate",
    "VMAnswer": "instancetype_webhook.admission.answer",
    "ReviewContext": "instancetype_webhook.admission.context",
    "Policy": "instancetype_webhook.admission.policy",
    # reference sources
    "load_catalog": "instancetype_webhook.sources.catalog",
    # the domain XML generator
    "render_domain": "instancetype_webhook.domxml",
    "vmi_from_vm": "instancetype_webhook.domxml",
    "DomainError": "instancetype_webhook.domxml",
    # JSON Patch
    "make_patch": "instancetype_webhook.patch",
}

__all__ = [
    "DEFAULT_SETTINGS", "Cause", "ClusterSettings", "DomainError", "ExpandError", "InMemorySource", "Policy",
    "ReviewContext", "Source", "VMAnswer", "Verdict", "__version__", "admit_object", "answer_vm", "expand",
    "expand_vm_spec", "load_catalog", "make_patch", "render_domain", "validate_matchers", "validate_vm",
    "vmi_from_vm",
]


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'instancetype_webhook' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
