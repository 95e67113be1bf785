"""inferFromVolume's objects from a live cluster (sources.volumes through ClusterSource.get), against
the strict fake API server: on-demand GETs, a missing CDI / snapshot API told apart from a missing
object, no hang when the API server stalls."""
from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from instancetype_webhook.kubevirt.source import (
    DATA_SOURCE,
    DATA_VOLUME,
    PERSISTENT_VOLUME_CLAIM,
    VOLUME_SNAPSHOT,
    KindNotServed,
)
from instancetype_webhook.sources.cluster import ClusterSource, SourceUnavailable
from tests.fakeapi.apiserver import FakeAPIServer

LABELS = {"instancetype.kubevirt.io/default-instancetype": "u1.medium"}
OBJECTS = [
    {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
     "metadata": {"name": "gold", "namespace": "images", "labels": LABELS},
     "spec": {"accessModes": ["ReadWriteOnce"]}},
    {"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataSource",
     "metadata": {"name": "fedora", "namespace": "images"},
     "spec": {"source": {"pvc": {"name": "gold", "namespace": "images"}}}},
    {"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume", "metadata": {"name": "root", "namespace": "vms"},
     "spec": {"sourceRef": {"kind": "DataSource", "name": "fedora", "namespace": "images"}}},
    {"apiVersion": "snapshot.storage.k8s.io/v1", "kind": "VolumeSnapshot",
     "metadata": {"name": "snap", "namespace": "images", "labels": LABELS}, "spec": {}},
]


@pytest.fixture
def fake():
    server = FakeAPIServer()
    for obj in OBJECTS:
        server.add(obj)
    yield server
    server.stop()


@pytest.fixture
def source(fake: FakeAPIServer, tmp_path: Path):
    config = tmp_path / "kubeconfig"
    config.write_text(fake.kubeconfig())
    src = ClusterSource.from_config(kubeconfig=config, backoff_max=0.3, lookup_timeout=1.0)
    yield src  # not started: the volume kinds never need the informers
    src.stop()


@pytest.mark.parametrize("kind,name,namespace", [
    (PERSISTENT_VOLUME_CLAIM, "gold", "images"), (DATA_SOURCE, "fedora", "images"),
    (DATA_VOLUME, "root", "vms"), (VOLUME_SNAPSHOT, "snap", "images")])
def test_each_kind_is_read_live(fake, source, kind, name, namespace):
    before = fake.count("GET ")
    obj = source.get(kind, name, namespace)
    assert obj["metadata"]["name"] == name and obj["kind"] == kind
    assert source.get(kind, name, "elsewhere") is None
    assert fake.count("GET ") - before >= 2  # one GET each, nothing listed or watched


def test_labels_are_read_as_they_are_now(fake, source):
    assert source.get(PERSISTENT_VOLUME_CLAIM, "gold", "images")["metadata"]["labels"] == LABELS
    fake.add({**OBJECTS[0], "metadata": {**OBJECTS[0]["metadata"], "labels": {}}})
    assert source.get(PERSISTENT_VOLUME_CLAIM, "gold", "images")["metadata"].get("labels", {}) == {}


@pytest.mark.parametrize("group,kind,api", [
    ("cdi.kubevirt.io", DATA_SOURCE, "cdi.kubevirt.io/v1beta1 API (datasources)"),
    ("cdi.kubevirt.io", DATA_VOLUME, "cdi.kubevirt.io/v1beta1 API (datavolumes)"),
    ("snapshot.storage.k8s.io", VOLUME_SNAPSHOT, "snapshot.storage.k8s.io/v1 API (volumesnapshots)")])
def test_api_not_installed_is_told_apart_from_a_missing_object(fake, source, group, kind, api):
    fake.uninstall(group)
    with pytest.raises(KindNotServed, match=re.escape(f"the {api} is not installed in the cluster")):
        source.get(kind, "anything", "images")
    assert source.get(PERSISTENT_VOLUME_CLAIM, "gold", "images") is not None  # core is always there


def test_installing_cdi_later_is_noticed(fake, source):
    source.volumes.discovery_ttl = 0.2
    fake.uninstall("cdi.kubevirt.io")
    with pytest.raises(KindNotServed):
        source.get(DATA_SOURCE, "fedora", "images")
    fake.install("cdi.kubevirt.io")
    time.sleep(0.25)
    assert source.get(DATA_SOURCE, "fedora", "images")["metadata"]["name"] == "fedora"
    assert source.get(DATA_SOURCE, "missing", "images") is None


def test_a_stalled_api_server_is_an_error_within_the_lookup_timeout(fake, source):
    fake.hang_gets = 3
    started = time.monotonic()
    with pytest.raises(SourceUnavailable, match="persistentvolumeclaims images/gold"):
        source.get(PERSISTENT_VOLUME_CLAIM, "gold", "images")
    assert time.monotonic() - started < 2.5
    fake.hang_gets = 0
