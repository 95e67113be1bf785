"""The ControllerRevisions virt-controller stores for a VM's instance type and preference, their names,
the start spec's revision names, and the Source that layers them over the cluster's objects."""
from __future__ import annotations

from instancetype_webhook.kubevirt.liveupdate.revisions import (
    API_VERSION,
    LayeredSource,
    controller_revision,
    revision_name,
    revision_specs,
)
from instancetype_webhook.kubevirt.source import CLUSTER_INSTANCETYPE, InMemorySource

OBJ = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": CLUSTER_INSTANCETYPE,
       "metadata": {"name": "u1.small", "uid": "abc", "generation": 3, "labels": {"x": "y"},
                    "annotations": {"a": "b"}},
       "spec": {"cpu": {"guest": 1}, "memory": {"guest": "2Gi"}}}
VM = {"metadata": {"name": "web", "namespace": "apps"}}


def test_revision_name_is_vm_object_version_uid_generation() -> None:
    assert revision_name("web", OBJ) == "web-u1.small-v1beta1-abc-3"
    assert revision_name("web", {"apiVersion": "instancetype.kubevirt.io/v1", "metadata": {"name": "n"}}) \
        == "web-n-v1--0"
    assert revision_name("web", {"metadata": {"name": "n", "generation": None}}) == "web-n-v1beta1--0"


def test_controller_revision_stores_the_object_without_labels_and_annotations() -> None:
    revision = controller_revision(VM, CLUSTER_INSTANCETYPE, OBJ)
    assert revision["kind"] == "ControllerRevision" and revision["apiVersion"] == "apps/v1"
    assert revision["metadata"]["name"] == "web-u1.small-v1beta1-abc-3"
    assert revision["metadata"]["namespace"] == "apps"
    assert revision["metadata"]["labels"] == {
        "instancetype.kubevirt.io/object-name": "u1.small",
        "instancetype.kubevirt.io/object-kind": CLUSTER_INSTANCETYPE,
        "instancetype.kubevirt.io/object-version": "v1beta1",
        "instancetype.kubevirt.io/object-uid": "abc",
        "instancetype.kubevirt.io/object-generation": "3"}
    data = revision["data"]
    assert data["apiVersion"] == API_VERSION and data["kind"] == CLUSTER_INSTANCETYPE
    assert data["metadata"] == {"name": "u1.small", "uid": "abc", "generation": 3}
    assert data["spec"] == OBJ["spec"]


def test_a_vm_without_namespace_gives_a_revision_without_one() -> None:
    revision = controller_revision({"metadata": {"name": "web"}}, CLUSTER_INSTANCETYPE, OBJ)
    assert "namespace" not in revision["metadata"]


def test_revision_specs_take_the_names_from_the_status_refs() -> None:
    vm = {"spec": {"instancetype": {"name": "u1.small"}, "preference": {"name": "fedora"}},
          "status": {"instancetypeRef": {"controllerRevisionRef": {"name": "rev-it"}}}}
    spec = revision_specs(vm)
    assert spec["instancetype"] == {"name": "u1.small", "revisionName": "rev-it"}
    assert spec["preference"] == {"name": "fedora"}  # no status ref: unchanged
    assert "revisionName" not in vm["spec"]["instancetype"]  # the VM is not changed
    assert revision_specs({"spec": {}, "status": {"instancetypeRef": {"controllerRevisionRef": {"name": "r"}}}}) == {}


def test_layered_source_answers_its_revisions_first_and_objects_from_the_base() -> None:
    base = InMemorySource(default_namespace="apps")
    base.add(OBJ)
    below = controller_revision(VM, CLUSTER_INSTANCETYPE, OBJ)
    below["metadata"]["name"] = "shared"
    base.add(below)
    mine = {**controller_revision(VM, CLUSTER_INSTANCETYPE, OBJ), "revision": 7}
    layered = LayeredSource(base, {"shared": mine})
    assert layered.default_namespace == "apps"
    assert layered.get(CLUSTER_INSTANCETYPE, "u1.small")["spec"] == OBJ["spec"]
    assert layered.get_revision("shared", "apps")["revision"] == 7
    assert LayeredSource(base).get_revision("shared", "apps")["revision"] == 0
    assert layered.get_revision("missing", "apps") is None
