"""The AdmissionReview every benchmark target receives: a typical VM create.

The VM references the bundled catalogue's `u1.medium` cluster instance type and `fedora`
cluster preference, as `virtctl create vm` or a console template would, and carries what a real
API server sends along: labels, a `kubectl apply` annotation, a cloud-init disk with an SSH key,
a data volume and a pod network. The same bytes go to the floor, /mutate and /validate.
"""
from __future__ import annotations

import copy
import uuid
from pathlib import Path
from typing import Any

import orjson

INSTANCETYPE, PREFERENCE = "u1.medium", "fedora"
NAMESPACE, NAME = "bench", "fedora-bench"
USER_DATA = (
    "#cloud-config\nuser: fedora\npassword: fedora\nchpasswd: { expire: False }\n"
    "ssh_authorized_keys:\n"
    "  - ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBenchmarkKeyBenchmarkKeyBenchmarkKey bench@example\n"
    "packages:\n  - qemu-guest-agent\nruncmd:\n  - [systemctl, enable, --now, qemu-guest-agent]\n"
)


def typical_vm(name: str = NAME, namespace: str = NAMESPACE) -> dict[str, Any]:
    """A VirtualMachine as a user submits it, referencing an instance type and a preference."""
    spec: dict[str, Any] = {
        "runStrategy": "Always",
        "instancetype": {"kind": "VirtualMachineClusterInstancetype", "name": INSTANCETYPE},
        "preference": {"kind": "VirtualMachineClusterPreference", "name": PREFERENCE},
        "dataVolumeTemplates": [{
            "metadata": {"name": f"{name}-root"},
            "spec": {
                "sourceRef": {"kind": "DataSource", "name": "fedora", "namespace": "kubevirt-os-images"},
                "storage": {"resources": {"requests": {"storage": "30Gi"}}},
            },
        }],
        "template": {
            "metadata": {"labels": {"kubevirt.io/domain": name, "app": "bench"},
                         "annotations": {"example.com/owner": "team-a"}},
            "spec": {
                "domain": {"devices": {
                    "disks": [{"name": "rootdisk"}, {"name": "cloudinitdisk"}],
                    "interfaces": [{"name": "default", "masquerade": {}}],
                }},
                "networks": [{"name": "default", "pod": {}}],
                "volumes": [
                    {"name": "rootdisk", "dataVolume": {"name": f"{name}-root"}},
                    {"name": "cloudinitdisk", "cloudInitNoCloud": {"userData": USER_DATA}},
                ],
            },
        },
    }
    vm: dict[str, Any] = {
        "apiVersion": "kubevirt.io/v1",
        "kind": "VirtualMachine",
        "metadata": {"name": name, "namespace": namespace, "labels": {"app": "bench", "team": "a"}},
        "spec": spec,
    }
    applied = orjson.dumps(vm).decode()
    vm["metadata"]["annotations"] = {"kubectl.kubernetes.io/last-applied-configuration": applied + "\n"}
    return vm


def admission_review(vm: dict[str, Any], operation: str = "CREATE") -> dict[str, Any]:
    """An admission.k8s.io/v1 AdmissionReview for `vm`, as the API server posts it."""
    meta = vm["metadata"]
    gvk = {"group": "kubevirt.io", "version": "v1", "kind": "VirtualMachine"}
    gvr = {"group": "kubevirt.io", "version": "v1", "resource": "virtualmachines"}
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": str(uuid.UUID(int=0x6265_6e63_6800_4000_8000_0000_0000_0001)),
            "kind": gvk, "resource": gvr, "requestKind": gvk, "requestResource": gvr,
            "name": meta["name"], "namespace": meta["namespace"], "operation": operation,
            "userInfo": {"username": "kubernetes-admin", "groups": ["system:masters", "system:authenticated"]},
            "object": copy.deepcopy(vm),
            "oldObject": None,
            "dryRun": False,
            "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions",
                        "fieldManager": "kubectl-client-side-apply"},
        },
    }


def write_review(path: Path) -> bytes:
    """Write the typical review to `path` (the wrk script reads it) and return its bytes."""
    body = orjson.dumps(admission_review(typical_vm()))
    path.write_bytes(body)
    return body
