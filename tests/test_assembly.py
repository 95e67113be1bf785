"""instancetype_webhook/assembly.py: one source and review context from the run settings, for every entry.

The entries (serve, the playground, audit, sweep) are run through the real CLI with the same flags and the
same INSTANCETYPE_WEBHOOK_* environment; each one's assembly is captured where it is built and compared."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from instancetype_webhook import assembly as assembly_module
from instancetype_webhook.assembly import Assembly, AssemblyError, assemble
from instancetype_webhook.cli import main
from instancetype_webhook.fleet import session as session_module
from instancetype_webhook.server import run as run_module
from instancetype_webhook.settings import ServerSettings
from instancetype_webhook.sources.catalog import InMemorySource
from tests.fakeapi.apiserver import FakeAPIServer


class Captured(BaseException):  # noqa: N818 (not an error: stops the entry once its context is built)
    """Raised by the spy once the entry has built its assembly (a BaseException: no `except Exception` on the
    way turns it into an exit status)."""


def test_offline_settings_give_the_bundled_catalogue_and_the_defaults():
    built = assemble(ServerSettings(policy="expand", provenance=False))
    try:
        assert isinstance(built.source, InMemorySource)
        assert built.where.startswith("bundled catalogue common-instancetypes ")  # the bundle main deploys
        assert built.ctx.policy == "expand" and built.ctx.provenance is False
        assert built.offload is False and built.ready() is True
        assert built.ctx.cluster.release.reported == "main" and built.ctx.namespace_labels is None
        assert "no KubeVirt CR offline" in built.configuration.describe()
    finally:
        built.stop()


@pytest.mark.parametrize("release, named", [
    ("auto", "bundled catalogue common-instancetypes v1.6.0-90-g7c1e305b "
             "(the project's bundle, used when answering as main)"),
    ("v1.8.4", "bundled catalogue common-instancetypes v1.6.0 (the bundle KubeVirt v1.8.x deploys)"),
    ("v1.9", "bundled catalogue common-instancetypes v1.7.0 (the bundle KubeVirt v1.9.x deploys)"),
])
def test_the_bundled_catalogue_is_named_by_its_bundle(release: str, named: str):
    built = assemble(ServerSettings(kubevirt_version=release))
    assert built.source_name() == built.where == named


def test_cluster_settings_given_in_the_environment_reach_the_offline_context(monkeypatch):
    monkeypatch.setenv("INSTANCETYPE_WEBHOOK_CLUSTER_ARCHITECTURE", "arm64")
    built = assemble(ServerSettings())
    assert built.ctx.cluster.architecture == "arm64" and built.ctx.cluster.origin == "environment"
    assert "INSTANCETYPE_WEBHOOK_CLUSTER_ARCHITECTURE" in built.configuration.describe()


def test_a_kubevirt_object_in_the_catalog_directory_is_the_configuration(tmp_path):
    kubevirt = {"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt", "metadata": {"name": "kubevirt",
                "namespace": "kubevirt"}, "spec": {"configuration": {"machineType": "pc-q35-rhel9.2.0"}},
                "status": {"observedKubeVirtVersion": "v1.8.4"}}
    (tmp_path / "kubevirt.yaml").write_text(yaml.safe_dump(kubevirt))
    built = assemble(ServerSettings(catalog=tmp_path))
    assert built.where == f"catalog {tmp_path}" and built.source_name() == f"catalog {tmp_path}"
    assert built.ctx.cluster.machine_type == "pc-q35-rhel9.2.0"
    assert built.ctx.cluster.release.reported == "v1.8.4"
    pinned = assemble(ServerSettings(catalog=tmp_path, kubevirt_version="v1.7.4"))
    assert pinned.ctx.cluster.release.reported == "v1.7.4"


@pytest.mark.pure_python  # counts the reads through a module function, which compiled callers do not see
def test_the_catalog_directory_is_read_once_and_pruned_as_its_kubevirt_objects_release(tmp_path, monkeypatch):
    """serve --catalog DIR parses each file once: the reference objects and the KubeVirt object come from one
    pass (a catalogue of 10,000 objects was parsed three times), and the objects are pruned as the release that
    KubeVirt object reports stores them."""
    import instancetype_webhook.sources.catalog as catalog_module

    kubevirt = {"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt", "metadata": {"name": "kubevirt",
                "namespace": "kubevirt"}, "spec": {"configuration": {}},
                "status": {"observedKubeVirtVersion": "v1.8.4"}}
    preference = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineClusterPreference",
                  "metadata": {"name": "video"}, "spec": {"devices": {"preferredVideoType": "virtio",
                                                                      "preferredDiskBus": "virtio"}}}
    (tmp_path / "kubevirt.yaml").write_text(yaml.safe_dump(kubevirt))
    (tmp_path / "preferences.yaml").write_text(yaml.safe_dump(preference))
    parsed: list[str] = []
    real = catalog_module.iter_documents
    monkeypatch.setattr(catalog_module, "iter_documents",
                        lambda text, origin="": parsed.append(origin) or real(text, origin))
    built = assemble(ServerSettings(catalog=tmp_path))
    assert sorted(parsed) == sorted([str(tmp_path / "kubevirt.yaml"), str(tmp_path / "preferences.yaml")])
    assert built.ctx.cluster.release.reported == "v1.8.4"
    stored = built.source.get("VirtualMachineClusterPreference", "video")
    assert stored["spec"] == {"devices": {"preferredDiskBus": "virtio"}}  # v1.9's field pruned as v1.8.4 stores it


def test_an_unreadable_catalogue_or_kubeconfig_is_an_assembly_error(tmp_path):
    (tmp_path / "broken.yaml").write_text("kind: [unclosed")
    with pytest.raises(AssemblyError):
        assemble(ServerSettings(catalog=tmp_path))
    with pytest.raises(AssemblyError, match="cannot load the kubeconfig"):
        assemble(ServerSettings(kubeconfig=tmp_path / "missing"))


def test_live_settings_reach_the_cluster_source(fake, tmp_path):
    settings = ServerSettings(kubeconfig=Path(fake.kubeconfig_file(tmp_path)), lookup_timeout=3.5,
                              kubevirt="kubevirt/kubevirt", cluster_architecture="arm64", kubevirt_version="v1.8.4",
                              watch_bookmark_interval=8, watch_timeout=120)
    built = assemble(settings)
    try:
        assert built.offload is True and built.where.startswith("cluster (")
        assert built.source_name() == "cluster"  # not the kubeconfig's path
        assert built.source.lookup_timeout == 3.5
        assert {(i.idle_timeout, i._watch_timeout) for i in built.source.informers.values()} == {(10.0, 120)}
        assert built.configuration is built.source.configuration
        assert built.configuration.pinned == "kubevirt/kubevirt"
        assert built.configuration.fallback.architecture == "arm64"
        assert built.ctx.cluster.release.reported == "v1.8.4"
        assert built.ctx.namespace_labels is not None
    finally:
        built.stop()


def _spy(captured: list[dict[str, Any]]):
    def spy(*args: Any, **kw: Any) -> Assembly:
        built = assembly_module.assemble(*args, **kw)
        built.stop()
        captured.append(built.describe())
        raise Captured
    return spy


ENTRIES = {
    "serve": ["serve", "--dev", "--host", "127.0.0.1", "--port", "0", "--metrics-port", "0"],
    "playground": ["playground", "--port", "0"],
    "audit": ["audit", "-A"],
    "sweep": ["sweep", "-A"],
}


def test_serve_audit_sweep_and_the_playground_build_equal_contexts(fake: FakeAPIServer, tmp_path, monkeypatch,
                                                                     app_logging):
    kubeconfig = fake.kubeconfig_file(tmp_path)
    for name, value in {"LOOKUP_TIMEOUT": "3.5", "KUBEVIRT": "kubevirt/kubevirt", "CLUSTER_ARCHITECTURE": "arm64",
                        "CLUSTER_MEMORY_OVERCOMMIT": "150", "PRESERVE_GUEST": "true", "PROVENANCE": "false",
                        "RESIZE_HANDWRITTEN": "false"}.items():
        monkeypatch.setenv(f"INSTANCETYPE_WEBHOOK_{name}", value)
    captured: list[dict[str, Any]] = []
    monkeypatch.setattr(run_module, "assemble", _spy(captured))
    monkeypatch.setattr(session_module, "assemble", _spy(captured))
    # (the release is not named: audit's --kubevirt-version, and so INSTANCETYPE_WEBHOOK_KUBEVIRT_VERSION, names the
    # upgrade preview's target, while audit answers as the cluster's own release)
    common = ["--kubeconfig", kubeconfig, "--policy", "expand", "--allow-vm-policy"]
    for argv in ENTRIES.values():
        with pytest.raises(Captured):
            main([*argv, *common])
    assert len(captured) == 4
    first = captured[0]
    assert first["source"]["lookup_timeout"] == 3.5
    assert first["configuration"]["pinned"] == "kubevirt/kubevirt"
    assert first["configuration"]["fallback"].architecture == "arm64"
    assert first["configuration"]["fallback"].memory_overcommit == 150
    assert first["ctx"]["policy"] == "expand" and first["ctx"]["vm_policy_overrides"] is True
    assert first["ctx"]["preserve_guest"] is True and first["ctx"]["provenance"] is False
    assert first["ctx"]["resize_handwritten"] is False
    assert first["ctx"]["cluster"].release.reported == "main"  # no KubeVirt CR: answered as main, saying so
    for entry, seen in zip(ENTRIES, captured, strict=True):
        assert seen == first, entry
