import pytest
import yaml

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


def test_yaml_aliases_expanding_past_the_bound_are_refused_with_one_line():
    from instancetype_webhook.sources.catalog import MAX_ALIAS_EXPANSION, alias_expansion

    levels = ['l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    levels += [f"l{n}: &l{n} [{', '.join([f'*l{n - 1}'] * 9)}]" for n in range(1, 9)]
    bomb = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lol}\ndata:\n" + "".join(f"  {x}\n" for x in levels)
    with pytest.raises(CatalogError, match=r"^bomb.yaml: refused: its YAML aliases expand past 1,000,000 nodes"):
        list(iter_documents(bomb, "bomb.yaml"))
    with pytest.raises(CatalogError, match="an anchor inside itself"):
        list(iter_documents("kind: X\nloop: &a [1, *a]\n", "loop.yaml"))
    assert MAX_ALIAS_EXPANSION == 1_000_000
    assert alias_expansion(yaml.safe_load("a: &a [1, 2]\nb: [*a, *a]")) == 6  # two copies of a 3-node list
    assert alias_expansion({"a": [1, {"b": 2}]}) == 0
    shared = yaml.safe_load("base: &b {cpu: 2}\nvms: [" + ", ".join(["*b"] * 50) + "]\n")
    written = yaml.safe_dump(shared)  # the shared map written once, then as 50 aliases: a few nodes, accepted
    assert "*id001" in written
    assert [doc["vms"][49] for doc in iter_documents(written)] == [{"cpu": 2}]
