import pytest

from instancetype_webhook.kubevirt.source import CLUSTER_INSTANCETYPE, CLUSTER_PREFERENCE
from instancetype_webhook.sources.catalog import CatalogError, iter_documents, load_catalog


def test_bundled_catalogue_holds_the_common_instancetypes():
    src = load_catalog()
    assert len(src) == 65 + 57
    u1 = src.get(CLUSTER_INSTANCETYPE, "u1.medium")
    assert u1["spec"]["cpu"]["guest"] == 1
    assert src.get(CLUSTER_PREFERENCE, "fedora") is not None


def test_directory_catalogue(tmp_path):
    (tmp_path / "a.yaml").write_text(
        "apiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachineInstancetype\n"
        "metadata: {name: small}\nspec: {cpu: {guest: 1}, memory: {guest: 1Gi}}\n---\n"
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ignored}\n"
    )
    src = load_catalog(tmp_path, default_namespace="ns1")
    assert len(src) == 1
    assert src.get("VirtualMachineInstancetype", "small", "ns1")["spec"]["cpu"]["guest"] == 1


def test_list_kinds_are_flattened():
    docs = list(iter_documents('{"kind": "List", "items": [{"kind": "A"}, {"kind": "B"}]}'))
    assert [d["kind"] for d in docs] == ["A", "B"]


def test_bad_yaml_is_a_clear_error():
    with pytest.raises(CatalogError, match="not valid YAML"):
        list(iter_documents("a: [", "f.yaml"))
    with pytest.raises(CatalogError, match="expected a Kubernetes object"):
        list(iter_documents("- 1\n- 2\n", "f.yaml"))
