"""A running VM read from a cluster for the live-update planner: the VM, its VMI, the VM-start
ControllerRevision (`revision-start-vm-<uid>-<generation>`, the highest generation), the instance type
and preference ControllerRevisions it references, the referenced objects, and the KubeVirt CR.

    read_running(client, namespace, name, extra_vms=()) -> Running        (raises RunningError)

Plain GETs (and one LIST of the namespace's ControllerRevisions and of the KubeVirt CRs) through the
fleet's VMClient; every failure is a RunningError with one line for the user.
"""
from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from instancetype_webhook.kubevirt.find import INSTANCETYPE_FAMILY, PREFERENCE_FAMILY, RESOURCES
from instancetype_webhook.kubevirt.source import CLUSTER_SCOPED
from instancetype_webhook.sources.kube import KubeError, VMClient

START_REVISION_PREFIX = "revision-start-vm-"
_FAMILIES = ((INSTANCETYPE_FAMILY, "instancetype"), (PREFERENCE_FAMILY, "preference"))


class RunningError(RuntimeError):
    """The running VM cannot be read (not found, not running, no VM-start revision, no access)."""


@dataclass
class Running:
    vm: dict[str, Any]
    vmi: dict[str, Any]
    start_spec: dict[str, Any]
    objects: list[dict[str, Any]] = field(default_factory=list)  # instance types, preferences, revisions
    kubevirt: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _q(value: str) -> str:
    return quote(value, safe="")


def _get(client: VMClient, path: str) -> dict[str, Any] | None:
    try:
        return client.request("GET", path)
    except KubeError as exc:
        if exc.status == 404:
            return None
        raise RunningError(f"GET {path}: {exc}") from exc


def start_spec(revisions: Iterable[dict[str, Any]], uid: str) -> dict[str, Any] | None:
    """The spec stored in the VM's newest VM-start revision (getLastVMRevisionSpec), or None."""
    prefix = f"{START_REVISION_PREFIX}{uid}-"
    best: tuple[int, dict[str, Any]] | None = None
    for revision in revisions:
        name = str(_obj(revision.get("metadata")).get("name") or "")
        if not name.startswith(prefix) or not name[len(prefix):].isdigit():
            continue
        generation = int(name[len(prefix):])
        if best is None or generation > best[0]:
            best = (generation, revision)
    if best is None:
        return None
    data = best[1].get("data")
    if isinstance(data, str):  # a client that kept the raw bytes as text
        data = json.loads(data)
    spec = _obj(data).get("spec")
    return spec if isinstance(spec, dict) else None


def object_path(kind: str, name: str, namespace: str) -> str:
    resource = RESOURCES[kind][0]
    base = "/apis/instancetype.kubevirt.io/v1beta1"
    if kind in CLUSTER_SCOPED:
        return f"{base}/{resource}/{_q(name)}"
    return f"{base}/namespaces/{_q(namespace)}/{resource}/{_q(name)}"


def referenced_objects(client: VMClient, vms: Iterable[dict[str, Any]], namespace: str) -> list[dict[str, Any]]:
    """The live instance types and preferences the VMs' matchers name (missing ones are left out)."""
    found: dict[str, dict[str, Any]] = {}
    for vm in vms:
        for family, key in _FAMILIES:
            matcher = _obj(_obj(vm.get("spec")).get(key))
            if not matcher.get("name"):
                continue
            try:
                kind = family.resolve_kind(str(matcher.get("kind") or ""))
            except Exception:  # noqa: BLE001 (an unknown kind: the planner reports it)
                continue
            path = object_path(kind, str(matcher["name"]), namespace)
            if path not in found:
                obj = _get(client, path)
                if obj is not None:
                    found[path] = {**obj, "kind": kind}
    return list(found.values())


def read_running(client: VMClient, namespace: str, name: str, extra_vms: Iterable[dict[str, Any]] = ()) -> Running:
    base = f"/apis/kubevirt.io/v1/namespaces/{_q(namespace)}"
    vm = _get(client, f"{base}/virtualmachines/{_q(name)}")
    if vm is None:
        raise RunningError(f"VirtualMachine {namespace}/{name} not found")
    vm = {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", **vm}
    vmi = _get(client, f"{base}/virtualmachineinstances/{_q(name)}")
    if vmi is None:
        raise RunningError(f"VirtualMachine {namespace}/{name} is not running: it has no VirtualMachineInstance")
    try:
        listed = client.request("GET", f"/apis/apps/v1/namespaces/{_q(namespace)}/controllerrevisions")
    except KubeError as exc:
        raise RunningError(f"cannot list the ControllerRevisions of {namespace}: {exc}") from exc
    revisions = [{"apiVersion": "apps/v1", "kind": "ControllerRevision", **r}
                 for r in listed.get("items") or [] if isinstance(r, dict)]
    uid = str(_obj(vm.get("metadata")).get("uid") or "")
    spec = start_spec(revisions, uid)
    if spec is None:
        raise RunningError(f"VirtualMachine {namespace}/{name} has no VM-start ControllerRevision "
                           f"({START_REVISION_PREFIX}{uid}-<generation>): virt-controller did not start this VMI")
    objects = [r for r in revisions
               if not str(_obj(r.get("metadata")).get("name", "")).startswith(START_REVISION_PREFIX)]
    objects += referenced_objects(client, [vm, *extra_vms], namespace)
    running = Running(vm, vmi, spec, objects)
    try:
        kubevirts = client.request("GET", "/apis/kubevirt.io/v1/kubevirts").get("items") or []
    except KubeError as exc:
        running.notes.append(f"cluster configuration not read ({exc}); KubeVirt's defaults are assumed")
        kubevirts = []
    from instancetype_webhook.kubevirt.configuration import usable_kubevirt

    running.kubevirt = dict(usable_kubevirt(kubevirts) or {}) or None
    if not kubevirts and not running.notes:
        running.notes.append("no KubeVirt CR found; KubeVirt's default configuration is assumed")
    return running
