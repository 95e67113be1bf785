"""What a review decision needs, built once per server (or per CLI run): the reference source, settings and policy."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from instancetype_webhook.admission.policy import NamespaceLabels, Policy
from instancetype_webhook.kubevirt.configuration import DEFAULT_SETTINGS, ClusterSettings
from instancetype_webhook.kubevirt.source import Source

VM_GROUP: Final = "kubevirt.io"
VM_KIND: Final = "VirtualMachine"
INSTANCETYPE_GROUP: Final = "instancetype.kubevirt.io"


@dataclass
class ReviewContext:
    source: Source
    policy: Policy = "reference"
    cluster: ClusterSettings = DEFAULT_SETTINGS
    namespace_labels: NamespaceLabels | None = None
    provenance: bool = True
    vm_policy_overrides: bool = False  # honour the VM annotation instancetype-webhook.kubevirt.io/policy
    preserve_guest: bool = False  # flat VMs keep the devices virt-controller auto-attaches
                                  # (instancetype_webhook.kubevirt.guest)
    resize_handwritten: bool = True  # resize hand-written flat VMs (instancetype_webhook/admission/resize.py)


# What became of a review (the log line's and the metrics' `outcome`); the server adds "deadline", "error"
ReviewOutcome = Literal["allowed", "denied", "patched", "skipped", "deadline", "error"]


@dataclass(init=False)
class ReviewReply:
    """A handler's answer plus what the log line and metrics need."""

    allowed: bool
    body: bytes
    kind: str
    outcome: ReviewOutcome
    patch_ops: int
    policy: Policy | Literal[""]

    # __init__ written out: the compiled build runs a dataclass's generated __init__ as Python (5x the cost)
    def __init__(self, allowed: bool, body: bytes, kind: str, outcome: ReviewOutcome, patch_ops: int = 0,
                 policy: Policy | Literal[""] = "") -> None:
        self.allowed = allowed
        self.body = body
        self.kind = kind
        self.outcome = outcome
        self.patch_ops = patch_ops
        self.policy = policy


def is_vm(gvk: Mapping[str, Any]) -> bool:
    return gvk.get("group") == VM_GROUP and gvk.get("kind") == VM_KIND


def namespace_of(request: Mapping[str, Any], obj: dict[str, Any]) -> str:
    meta = obj.get("metadata")
    ns = meta.get("namespace") if type(meta) is dict else None
    return ns or request.get("namespace") or "default"


def with_namespace(obj: dict[str, Any], namespace: str) -> dict[str, Any]:
    """`obj` with metadata.namespace set when missing (shallow copy; the core resolves references by it)."""
    meta = obj.get("metadata")
    if type(meta) is dict and meta.get("namespace"):
        return obj
    return {**obj, "metadata": {**(meta if type(meta) is dict else {}), "namespace": namespace}}
