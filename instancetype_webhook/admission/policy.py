"""Which reference policy applies to a VM review, and whether to flatten it now (spec section 4.5).

Policies:
- `reference`: never flatten; the VM keeps its matchers (upstream's default).
- `expand`: flatten on CREATE (the status is empty then, so upstream's controller would expand every
  new VM with a matcher, honouring `spec.*.revisionName`); on UPDATE flatten unless the *stored*
  object (`oldObject.status`) already holds a `controllerRevisionRef` for the instance type or the
  preference: such a VM was captured under `reference` and keeps referencing.
- `expandAll`: flatten on every CREATE and UPDATE that carries a matcher.

Who decides: the cluster admin. Overrides, most specific first (a value that is not a policy is
ignored with a warning):
1. the VM annotation `instancetype-webhook.kubevirt.io/policy: reference|expand|expandAll`, only when
   the admin turned VM-level overrides on (`serve --allow-vm-policy`, chart `allowVMPolicyOverride`).
   Off by default: the annotation is ignored with a warning naming the policy that applies, so a VM
   owner cannot opt out of the cluster's `expandAll` (the design's "I want my cluster to comply");
2. the label `instancetype-webhook.kubevirt.io/policy` on the VM's Namespace (an admin tool: read from
   the live cluster source's Namespace cache; offline sources have no namespaces);
3. the server's `--policy`.
Dry-run requests are decided the same way; the webhook has no side effects, so nothing is written.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeGuard, get_args

import orjson

from instancetype_webhook.kubevirt.imprint import (
    PROVENANCE_KEY as PROVENANCE_KEY,  # re-exported: the webhook edge names it
)
from instancetype_webhook.kubevirt.source import CLUSTER_INSTANCETYPE, CLUSTER_PREFERENCE, INSTANCETYPE, PREFERENCE

POLICY_KEY: Final = "instancetype-webhook.kubevirt.io/policy"
Policy = Literal["reference", "expand", "expandAll"]
POLICIES: Final[tuple[Policy, ...]] = get_args(Policy)
Origin = Literal["server", "namespace", "annotation"]  # who chose the policy that applies


def is_policy(value: object) -> TypeGuard[Policy]:
    return value in POLICIES

NamespaceLabels = Callable[[str], "dict[str, str] | None"]

_INSTANCETYPE_KINDS: Final = {
    "virtualmachineinstancetype": INSTANCETYPE, "virtualmachineinstancetypes": INSTANCETYPE,
    "virtualmachineclusterinstancetype": CLUSTER_INSTANCETYPE,
    "virtualmachineclusterinstancetypes": CLUSTER_INSTANCETYPE,
}
_PREFERENCE_KINDS: Final = {
    "virtualmachinepreference": PREFERENCE, "virtualmachinepreferences": PREFERENCE,
    "virtualmachineclusterpreference": CLUSTER_PREFERENCE, "virtualmachineclusterpreferences": CLUSTER_PREFERENCE,
}


@dataclass(init=False)
class Decision:
    policy: Policy
    origin: Origin
    expand: bool
    why: str
    warnings: list[str]

    # __init__ written out: the compiled build runs a dataclass's generated __init__ as Python (5x the cost)
    def __init__(self, policy: Policy, origin: Origin, expand: bool, why: str,
                 warnings: list[str] | None = None) -> None:
        self.policy = policy
        self.origin = origin
        self.expand = expand
        self.why = why
        self.warnings = [] if warnings is None else warnings


def has_matcher(spec: dict[str, Any]) -> bool:
    return spec.get("instancetype") is not None or spec.get("preference") is not None


def _dict(value: Any) -> dict[str, Any]:
    return value if type(value) is dict else {}


def effective_policy(server_policy: Policy, vm: dict[str, Any], namespace: str,
                     namespace_labels: NamespaceLabels | None,
                     vm_overrides: bool = False) -> tuple[Policy, Origin, list[str]]:
    """(policy, origin, warnings) after the namespace label and (when allowed) VM annotation overrides."""
    warnings: list[str] = []
    policy: Policy = server_policy
    origin: Origin = "server"
    if namespace_labels is not None and namespace:
        value = (namespace_labels(namespace) or {}).get(POLICY_KEY)
        if value is not None:
            if is_policy(value):
                policy, origin = value, "namespace"
            else:
                warnings.append(f"ignoring namespace label {POLICY_KEY}={value[:20]!r}: not a policy")
    value = _dict(_dict(vm.get("metadata")).get("annotations")).get(POLICY_KEY)
    if value is not None and not vm_overrides:
        where = "cluster" if origin == "server" else "namespace"
        warnings.append(f"{POLICY_KEY} annotation ignored (VM overrides off): policy {policy} ({where}) applies")
    elif value is not None:
        if is_policy(value):
            policy, origin = value, "annotation"
        else:
            warnings.append(f"ignoring annotation {POLICY_KEY}={str(value)[:20]!r}: not a policy")
    return policy, origin, warnings


def captured_revision(old_vm: dict[str, Any] | None) -> str | None:
    """The controllerRevisionRef name in the stored VM's status, if any (the `expand` gate)."""
    status = _dict(_dict(old_vm).get("status"))
    for ref in ("instancetypeRef", "preferenceRef"):
        name = _dict(_dict(status.get(ref)).get("controllerRevisionRef")).get("name")
        if name:
            return str(name)
    return None


def decide(server_policy: Policy, operation: str, vm: dict[str, Any], old_vm: dict[str, Any] | None,
           namespace: str, namespace_labels: NamespaceLabels | None = None, vm_overrides: bool = False) -> Decision:
    policy, origin, warnings = effective_policy(server_policy, vm, namespace, namespace_labels, vm_overrides)
    if not has_matcher(_dict(vm.get("spec"))):
        return Decision(policy, origin, False, "no instancetype or preference matcher", warnings)
    if policy == "reference":
        return Decision(policy, origin, False, "reference policy keeps matchers", warnings)
    if policy == "expand" and operation == "UPDATE":
        revision = captured_revision(old_vm)
        if revision:
            return Decision(policy, origin, False, f"stored VM references revision {revision}", warnings)
    return Decision(policy, origin, True, f"{policy} on {operation}", warnings)


def matcher_kind(matcher: dict[str, Any], instancetype: bool) -> str | None:
    """The canonical kind a matcher names (empty means the cluster kind); None if unknown."""
    kind = str(matcher.get("kind") or "")
    if not kind:
        return CLUSTER_INSTANCETYPE if instancetype else CLUSTER_PREFERENCE
    return (_INSTANCETYPE_KINDS if instancetype else _PREFERENCE_KINDS).get(kind.lower())


def provenance(vm: dict[str, Any], namespace: str, source: Any, imprint: dict[str, Any] | None = None,
               inferred: dict[str, dict[str, str]] | None = None, kubevirt: str | None = None) -> str:
    """The provenance annotation value: what was inlined, as compact JSON.

    Per matcher: kind and name, plus `revision` when `revisionName` pinned a ControllerRevision,
    otherwise the live object's `uid` and `generation` (as the source saw them). A matcher that
    `inferFromVolume` resolved also has `inferredFrom`: the volume and the object whose labels named it
    (`{"volume", "kind", "namespace", "name"}`, from `inferred`). Then the imprint
    (`set`, `replaced`: what flattening wrote, instancetype_webhook/kubevirt/imprint.py), which a resize takes out.
    Last `kubevirt`: the KubeVirt release the VM was flattened as (`v1.8.4`, `main`), when given.
    """
    spec = _dict(vm.get("spec"))
    out: dict[str, Any] = {}
    for key, is_it in (("instancetype", True), ("preference", False)):
        matcher = _dict(spec.get(key))
        if not matcher:
            continue
        kind = matcher_kind(matcher, is_it) or str(matcher.get("kind"))
        entry: dict[str, Any] = {"kind": kind, "name": matcher.get("name", "")}
        if inferred and key in inferred:
            entry["inferredFrom"] = inferred[key]
        if matcher.get("revisionName"):
            entry["revision"] = matcher["revisionName"]
        elif entry["name"]:
            obj = source.get(kind, entry["name"], namespace) if kind else None
            meta = _dict(_dict(obj).get("metadata"))
            if meta.get("uid"):
                entry["uid"] = meta["uid"]
            if meta.get("generation") is not None:
                entry["generation"] = meta["generation"]
        out[key] = entry
    out.update(imprint or {})
    if kubevirt:
        out["kubevirt"] = kubevirt
    return orjson.dumps(out).decode()


def with_annotation(flat: dict[str, Any], key: str, value: str) -> dict[str, Any]:
    """`flat` with one more metadata annotation, sharing everything else (shallow copies only)."""
    meta = dict(_dict(flat.get("metadata")))
    meta["annotations"] = {**_dict(meta.get("annotations")), key: value}
    return {**flat, "metadata": meta}
