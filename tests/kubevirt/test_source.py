"""Where referenced objects come from (instancetype_webhook.kubevirt.source): the in-memory Source."""
from instancetype_webhook.kubevirt.source import (
    CLUSTER_INSTANCETYPE,
    CLUSTER_PREFERENCE,
    CLUSTER_SCOPED,
    CONTROLLER_REVISION,
    INSTANCETYPE,
    CacheMiss,
    InMemorySource,
    SourceUnavailable,
)


def _obj(kind, name, ns=None):
    meta = {"name": name}
    if ns:
        meta["namespace"] = ns
    return {"kind": kind, "metadata": meta, "spec": {}}


def test_lookups_go_by_kind_and_scope():
    src = InMemorySource([_obj(CLUSTER_INSTANCETYPE, "a"), _obj(INSTANCETYPE, "b", "ns1")], default_namespace="ns0")
    assert src.get(CLUSTER_INSTANCETYPE, "a", "anything")["metadata"]["name"] == "a"
    assert src.get(INSTANCETYPE, "a", "ns1") is None
    assert src.get(INSTANCETYPE, "b", "ns1") is not None
    assert src.get(INSTANCETYPE, "b", "ns0") is None


def test_namespaced_object_without_namespace_lives_in_default_namespace():
    src = InMemorySource([_obj(INSTANCETYPE, "c")], default_namespace="vmns")
    assert src.get(INSTANCETYPE, "c", "vmns") is not None
    assert src.get(INSTANCETYPE, "c", "other") is None


def test_remove_objects_and_len():
    src = InMemorySource([_obj(CLUSTER_INSTANCETYPE, "a"), _obj(INSTANCETYPE, "b", "ns1")])
    assert len(src) == 2 and [o["metadata"]["name"] for o in src.objects()] == ["a", "b"]
    src.remove(INSTANCETYPE, "b", "other")  # not there: nothing happens
    assert len(src) == 2
    src.remove(INSTANCETYPE, "b", "ns1")
    src.remove(CLUSTER_INSTANCETYPE, "a", "ignored")
    assert len(src) == 0 and src.get(CLUSTER_INSTANCETYPE, "a") is None


def test_adding_the_same_name_again_replaces_the_object():
    src = InMemorySource([_obj(INSTANCETYPE, "b", "ns1")])
    newer = {**_obj(INSTANCETYPE, "b", "ns1"), "spec": {"cpu": {"guest": 2}}}
    src.add(newer)
    assert len(src) == 1 and src.get(INSTANCETYPE, "b", "ns1") is newer


def test_revisions_are_namespaced_controller_revisions():
    src = InMemorySource([_obj(CONTROLLER_REVISION, "r", "ns1")])
    assert src.get_revision("r", "ns1")["metadata"]["name"] == "r"
    assert src.get_revision("r", "ns2") is None and src.get_revision("other", "ns1") is None


def test_source_unavailable_reason_and_the_cluster_scoped_kinds():
    assert SourceUnavailable("timed out").reason == "reference lookup failed: timed out"
    assert {CLUSTER_INSTANCETYPE, CLUSTER_PREFERENCE} == CLUSTER_SCOPED
    assert not issubclass(CacheMiss, Exception)  # no `except Exception` turns it into an answer
