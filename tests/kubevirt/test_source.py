from instancetype_webhook.kubevirt.source import CLUSTER_INSTANCETYPE, INSTANCETYPE, InMemorySource


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
