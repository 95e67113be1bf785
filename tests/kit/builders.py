"""Building the objects the webhook reviews: a KubeVirt VirtualMachine (`vm`) and an AdmissionReview (`review`).

`vm()` is a Halted VM `ns/vm` with an empty domain (`{"devices": {}}`); each keyword changes one part of it.
Matchers (`instancetype=`, `preference=`) take a name (with an optional `*_kind`) or the whole matcher dict.
`instancetype()` is a (cluster) instance type with a guest CPU count and memory.
`review()` wraps an object (and the old one, for UPDATE/DELETE) as the API server sends it to a webhook.
`undecodable_revision()` is a ControllerRevision no release since v1.7 can decode (an object of a removed API).
"""
from __future__ import annotations

import copy
import uuid
from typing import Any

VM_GVK = ("kubevirt.io", "v1", "VirtualMachine")
NO_DOMAIN: dict[str, Any] = {}  # pass as `domain=NO_DOMAIN` for a template spec without a domain at all
CONTAINER_DISK = {"name": "rootdisk", "containerDisk": {"image": "quay.io/containerdisks/fedora:41"}}


def matcher(value: str | dict[str, Any] | None, kind: str | None = None) -> dict[str, Any] | None:
    """`{"name": value}` (and `"kind"`) for a name; a dict as it is; None for None."""
    if value is None or isinstance(value, dict):
        return value
    return {"name": value, **({"kind": kind} if kind else {})}


def vm(name: str = "vm", namespace: str | None = "ns", *, instancetype: str | dict[str, Any] | None = None,
       instancetype_kind: str | None = None, preference: str | dict[str, Any] | None = None,
       preference_kind: str | None = None, run_strategy: str | None = "Halted", domain: dict[str, Any] | None = None,
       volumes: list[dict[str, Any]] | None = None, template: dict[str, Any] | None = None,
       spec: dict[str, Any] | None = None, labels: dict[str, str] | None = None,
       annotations: dict[str, str] | None = None, metadata: dict[str, Any] | None = None,
       status: dict[str, Any] | None = None, typed: bool = True) -> dict[str, Any]:
    """A VirtualMachine. `domain`: the template's domain (default `{"devices": {}}`, `NO_DOMAIN` for none);
    `volumes`: the template's volumes (none by default); `template`: more keys of the template's spec;
    `spec`: more keys of the VM's spec (they win over the ones built here); `metadata`: more metadata keys;
    `run_strategy=None` leaves it out; `typed=False` leaves out apiVersion and kind."""
    template_spec: dict[str, Any] = {}
    if domain is not NO_DOMAIN:
        template_spec["domain"] = copy.deepcopy(domain) if domain is not None else {"devices": {}}
    template_spec.update(copy.deepcopy(template or {}))
    if volumes is not None:
        template_spec["volumes"] = copy.deepcopy(volumes)
    body: dict[str, Any] = {}
    if run_strategy is not None:
        body["runStrategy"] = run_strategy
    body["template"] = {"spec": template_spec}
    if instancetype is not None:
        body["instancetype"] = matcher(instancetype, instancetype_kind)
    if preference is not None:
        body["preference"] = matcher(preference, preference_kind)
    body.update(copy.deepcopy(spec or {}))
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    if labels is not None:
        meta["labels"] = dict(labels)
    if annotations is not None:
        meta["annotations"] = dict(annotations)
    meta.update(copy.deepcopy(metadata or {}))
    out: dict[str, Any] = {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine"} if typed else {}
    out |= {"metadata": meta, "spec": body}
    if status is not None:
        out["status"] = copy.deepcopy(status)
    return out


def instancetype(name: str, cpu: int = 1, namespace: str | None = None, memory: str = "1Gi") -> dict[str, Any]:
    """A VirtualMachineClusterInstancetype `name` (a namespaced VirtualMachineInstancetype with `namespace`)."""
    kind = "VirtualMachineInstancetype" if namespace else "VirtualMachineClusterInstancetype"
    meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": kind, "metadata": meta,
            "spec": {"cpu": {"guest": cpu}, "memory": {"guest": memory}}}


def undecodable_revision(name: str, namespace: str, object_name: str,
                         kind: str = "VirtualMachineClusterPreference") -> dict[str, Any]:
    """A ControllerRevision `namespace/name` of object `object_name` (its object-name label) that stores a `kind`
    of `instancetype.kubevirt.io/v1alpha2`: a version the client scheme no longer registers, so a lookup through
    it fails with a decode error that names the release's scheme (client-go's register.go line)."""
    return {"apiVersion": "apps/v1", "kind": "ControllerRevision",
            "metadata": {"name": name, "namespace": namespace,
                         "labels": {"instancetype.kubevirt.io/object-name": object_name}},
            "data": {"apiVersion": "instancetype.kubevirt.io/v1alpha2", "kind": kind,
                     "metadata": {"name": object_name}, "spec": {}}}


def review(obj: Any, operation: str = "CREATE", old: Any = None, *,
           dry_run: bool = False, uid: str | None = None, namespace: str | None = None,
           group: str = VM_GVK[0], version: str = VM_GVK[1], kind: str = VM_GVK[2], username: str = "test",
           **extra: Any) -> dict[str, Any]:
    """An `admission.k8s.io/v1` AdmissionReview for `obj` (and `old`); name and namespace come from the
    object's metadata (a non-dict object, as a fuzzer sends, has none) unless `namespace` is given; `extra`
    sets (or overrides) keys of the request (e.g. `name=`)."""
    source = obj if isinstance(obj, dict) else old if isinstance(old, dict) else {}
    meta = source.get("metadata") if isinstance(source.get("metadata"), dict) else {}
    request: dict[str, Any] = {
        "uid": uid or str(uuid.uuid4()), "kind": {"group": group, "version": version, "kind": kind},
        "resource": {"group": group, "version": version, "resource": kind.lower() + "s"},
        "operation": operation, "namespace": meta.get("namespace", "") if namespace is None else namespace,
        "name": meta.get("name", ""), "object": obj, "oldObject": old, "dryRun": dry_run,
        "userInfo": {"username": username},
    }
    request.update(extra)
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


def edited(base: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A deep copy of `base` with the dotted `path` set to `value` (objects created on the way)."""
    out = copy.deepcopy(base)
    node = out
    keys = path.split(".")
    for key in keys[:-1]:
        node = node.setdefault(key, {})
    node[keys[-1]] = value
    return out
