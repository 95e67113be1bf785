"""What watching every PVC / DataVolume would cost: the memory of a cluster source cache holding them.

    .venv/bin/python bench/volume_cache_memory.py [--count 20000]

Builds `count` PersistentVolumeClaims and as many DataVolumes shaped like the ones a CDI cluster holds
(bound PVCs with CDI's annotations, managedFields as the API server returns them), puts them through
the same compaction the informer caches use (instancetype_webhook.sources.compact) into a dict keyed like an informer
store, and reports the traced Python heap per object and in total. The answer decided the design:
instancetype_webhook.sources.volumes looks these objects up on demand instead (README "inferFromVolume").
"""
from __future__ import annotations

import argparse
import gc
import json
import tracemalloc
import uuid

from instancetype_webhook.sources.compact import compact


def managed_fields(manager: str) -> list[dict]:
    return [{"manager": manager, "operation": "Update", "apiVersion": "v1", "time": "2026-08-01T09:00:00Z",
             "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:annotations": {".": {},
             "f:cdi.kubevirt.io/storage.pod.phase": {}, "f:cdi.kubevirt.io/storage.condition.running": {}},
             "f:labels": {".": {}, "f:app": {}}}, "f:spec": {"f:accessModes": {}, "f:resources": {"f:requests": {
             ".": {}, "f:storage": {}}}, "f:storageClassName": {}, "f:volumeMode": {}}}}]


def pvc(i: int) -> dict:
    name = f"vm-{i:06d}-rootdisk"
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {
        "name": name, "namespace": f"team-{i % 200}", "uid": str(uuid.uuid4()), "resourceVersion": str(100000 + i),
        "creationTimestamp": "2026-08-01T09:00:00Z", "labels": {"app": "containerized-data-importer",
                                                                "app.kubernetes.io/component": "storage"},
        "annotations": {"cdi.kubevirt.io/storage.condition.running": "false",
                        "cdi.kubevirt.io/storage.pod.phase": "Succeeded",
                        "cdi.kubevirt.io/storage.populatedFor": name,
                        "pv.kubernetes.io/bind-completed": "yes",
                        "volume.kubernetes.io/storage-provisioner": "rook-ceph.rbd.csi.ceph.com"},
        "finalizers": ["kubernetes.io/pvc-protection"],
        "ownerReferences": [{"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume", "name": name,
                             "uid": str(uuid.uuid4()), "controller": True, "blockOwnerDeletion": True}],
        "managedFields": managed_fields("kube-controller-manager")},
        "spec": {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": "30Gi"}},
                 "storageClassName": "ocs-storagecluster-ceph-rbd-virtualization", "volumeMode": "Block",
                 "volumeName": f"pvc-{uuid.uuid4()}"},
        "status": {"phase": "Bound", "accessModes": ["ReadWriteMany"], "capacity": {"storage": "30Gi"}}}


def data_volume(i: int) -> dict:
    name = f"vm-{i:06d}-rootdisk"
    return {"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume", "metadata": {
        "name": name, "namespace": f"team-{i % 200}", "uid": str(uuid.uuid4()), "resourceVersion": str(300000 + i),
        "generation": 1, "creationTimestamp": "2026-08-01T09:00:00Z",
        "annotations": {"cdi.kubevirt.io/storage.usePopulator": "true"},
        "ownerReferences": [{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "name": f"vm-{i:06d}",
                             "uid": str(uuid.uuid4()), "controller": True, "blockOwnerDeletion": True}],
        "managedFields": managed_fields("virt-controller")},
        "spec": {"sourceRef": {"kind": "DataSource", "name": "fedora",
                               "namespace": "openshift-virtualization-os-images"},
                 "storage": {"resources": {"requests": {"storage": "30Gi"}}}},
        "status": {"phase": "Succeeded", "progress": "100.0%", "claimName": name, "conditions": [
            {"type": "Bound", "status": "True", "reason": "Bound", "lastTransitionTime": "2026-08-01T09:01:00Z",
             "lastHeartbeatTime": "2026-08-01T09:01:00Z"},
            {"type": "Ready", "status": "True", "reason": "", "lastTransitionTime": "2026-08-01T09:02:00Z",
             "lastHeartbeatTime": "2026-08-01T09:02:00Z"}]}}


def measure(make, count: int) -> tuple[int, int]:
    """(traced bytes of a compacted store of `count` objects, bytes of one object as JSON on the wire)."""
    wire = len(json.dumps(make(0)))
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    store = {}
    for i in range(count):
        obj = compact(json.loads(json.dumps(make(i))))  # as decoded from a list response
        meta = obj["metadata"]
        store[(meta["namespace"], meta["name"])] = obj
    gc.collect()
    used = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    del store
    return used, wire


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=20000)
    args = parser.parse_args()
    for label, make in (("PersistentVolumeClaim", pvc), ("DataVolume", data_volume)):
        used, wire = measure(make, args.count)
        per = used / args.count
        print(f"{label:22} {args.count} objects: {used / 2**20:7.1f} MiB traced, {per / 1024:5.2f} KiB each "
              f"({wire} B as JSON); 100k would be {per * 100000 / 2**20:6.0f} MiB")


if __name__ == "__main__":
    main()
