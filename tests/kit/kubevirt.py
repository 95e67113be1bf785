"""Builders shared by the tests of the kubevirt core (tests/kubevirt): instance type specs, VMI templates,
a preference applied to a template, and arbitrary JSON for the never-a-crash properties."""
from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from instancetype_webhook.kubevirt.preference.apply import apply_preference

BASE = "spec.template.spec"  # where a VM's conflicts are rooted


def itype(guest: int = 2, mem: str = "2Gi", **extra: Any) -> dict[str, Any]:
    """An instance type spec with `cpu.guest` and `memory.guest`; `cpu=`/`memory=` extend those sections, any
    other keyword is a top-level field."""
    spec: dict[str, Any] = {"cpu": {"guest": guest}, "memory": {"guest": mem}}
    for key, value in extra.items():
        if key in ("cpu", "memory"):
            spec[key].update(value)
        else:
            spec[key] = value
    return spec


def template(domain: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    """A VM's `spec.template`: empty metadata, the given domain and other VMI spec fields."""
    return {"metadata": {}, "spec": {"domain": domain or {}, **spec}}


def fields(causes: list[Any]) -> list[str]:
    return [c.field for c in causes]


def applied(pref: dict[str, Any] | None, spec: dict[str, Any] | None = None,
            metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    """The template `{metadata, spec}` (default: an empty domain) after `apply_preference(pref, ...)`."""
    t = {"metadata": metadata if metadata is not None else {}, "spec": spec if spec is not None else {"domain": {}}}
    apply_preference(pref, t)
    return t


# Arbitrary JSON where the VM and the referenced specs have structure (keys the core reads, and junk).
KEYS = st.sampled_from(
    ["cpu", "memory", "guest", "sockets", "cores", "threads", "resources", "requests", "limits", "devices", "disks",
     "interfaces", "hugepages", "pageSize", "requirements", "preferredCPUTopology", "spreadOptions", "ratio", "across",
     "architecture", "annotations", "nodeSelector", "gpus", "name", "x"]
)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 2**33) | st.sampled_from(["", "1Gi", "2", "spread", "amd64", "x"]),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(KEYS, children, max_size=4),
    max_leaves=12,
)
