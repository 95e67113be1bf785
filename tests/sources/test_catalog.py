from pathlib import Path

import pytest
import yaml

from instancetype_webhook.catalog import BUNDLES
from instancetype_webhook.kubevirt.causes import ExpandError
from instancetype_webhook.kubevirt.configuration import settings_from_configuration
from instancetype_webhook.kubevirt.expand import expand
from instancetype_webhook.kubevirt.releases import resolve
from instancetype_webhook.kubevirt.source import CLUSTER_INSTANCETYPE, CLUSTER_PREFERENCE
from instancetype_webhook.sources.catalog import CatalogError, describe_catalog, iter_documents, load_catalog
from tests.kit.builders import vm as build_vm


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


# -- each release's own bundle -------------------------------------------------------------------------------

VERSION_LABEL = "instancetype.kubevirt.io/common-instancetypes-version"
SHARED_RELEASES = Path(__file__).resolve().parents[1] / "data" / "shared" / "common-instancetypes" / "releases"


def _flat(release: str, instancetype: str, preference: str) -> dict:
    vm = build_vm("web", "apps", instancetype=instancetype, preference=preference, domain={"devices": {}})
    settings = settings_from_configuration(None, release=resolve(release))
    return expand(vm, load_catalog(default_namespace="apps", release=resolve(release)), settings)


@pytest.mark.parametrize(("release", "version", "instancetypes", "preferences"), [
    ("v1.7.4", "v1.5.1", 55, 54), ("v1.8.4", "v1.6.0", 65, 54), ("v1.9.0", "v1.7.0", 65, 54),
    ("main", "v1.6.0-90-g7c1e305b", 65, 57),
])
def test_each_release_gets_the_bundle_its_virt_operator_deploys(release, version, instancetypes, preferences):
    src = load_catalog(release=resolve(release))
    kinds = [obj["kind"] for obj in src.objects()]
    assert (kinds.count(CLUSTER_INSTANCETYPE), kinds.count(CLUSTER_PREFERENCE)) == (instancetypes, preferences)
    assert {obj["metadata"]["labels"][VERSION_LABEL] for obj in src.objects()} == {version}
    assert src.bundle is not None and src.bundle.version == version
    assert src.description.startswith(f"bundled catalogue common-instancetypes {version} (")


def test_a_patch_release_gets_its_line_s_bundle():
    assert load_catalog(release=resolve("v1.8.2")).bundle == load_catalog(release=resolve("v1.8.4")).bundle


def test_the_description_names_the_bundle_or_the_directory(tmp_path):
    assert describe_catalog(None, resolve("v1.8.4")) == (
        "bundled catalogue common-instancetypes v1.6.0 (the bundle KubeVirt v1.8.x deploys)")
    src = load_catalog(tmp_path, release=resolve("v1.8.4"))
    assert src.bundle is None and src.description == f"catalog {tmp_path}"


def test_an_instance_type_only_in_a_newer_bundle_resolves_there_only():
    assert load_catalog(release=resolve("v1.7.4")).get(CLUSTER_INSTANCETYPE, "d1.medium") is None
    assert load_catalog(release=resolve("v1.8.4")).get(CLUSTER_INSTANCETYPE, "d1.medium") is not None
    with pytest.raises(ExpandError, match='"d1.medium" not found'):
        _flat("v1.7.4", "d1.medium", "fedora")
    assert _flat("v1.8.4", "d1.medium", "fedora")["spec"]["template"]["spec"]["domain"]["cpu"]["sockets"] == 1


def test_a_preference_only_in_the_project_s_bundle_resolves_there_only():
    assert load_catalog(release=resolve("main")).get(CLUSTER_PREFERENCE, "rhel.9.s390x.secex") is not None
    assert load_catalog(release=resolve("v1.9.0")).get(CLUSTER_PREFERENCE, "rhel.9.s390x.secex") is None


def test_the_same_vm_expands_differently_where_the_bundles_differ():
    # windows.11 prefers cores in the project's bundle, sockets in common-instancetypes v1.7.0 (KubeVirt v1.9)
    main = _flat("main", "u1.large", "windows.11")["spec"]["template"]["spec"]["domain"]["cpu"]
    v19 = _flat("v1.9.0", "u1.large", "windows.11")["spec"]["template"]["spec"]["domain"]["cpu"]
    assert (main["cores"], main["sockets"]) == (2, 1)
    assert (v19["cores"], v19["sockets"]) == (1, 2)


@pytest.mark.parametrize("release", ["v1.7.4", "v1.8.4", "v1.9.0"])
def test_the_packaged_bundles_are_the_shared_copies_unchanged(release):
    packaged = BUNDLES[resolve(release).line].files()
    shared = sorted((SHARED_RELEASES / release).glob("*.yaml"))
    assert [p.name for p in packaged] == [p.name for p in shared] and len(packaged) == 2
    assert all(a.read_bytes() == b.read_bytes() for a, b in zip(packaged, shared, strict=True))


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
