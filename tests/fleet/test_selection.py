"""instancetype_webhook.fleet.selection: shards by a stable hash, and a list that survives an expired continue token."""
from __future__ import annotations

from pathlib import Path

import pytest

from instancetype_webhook.fleet.selection import Shard, select
from instancetype_webhook.sources.kube import VMClient
from tests.fakeapi.apiserver import FakeAPIServer
from tests.kit.fleet_cluster import vm


@pytest.fixture
def fake():
    server = FakeAPIServer()
    yield server
    server.stop()


def client_for(fake: FakeAPIServer, tmp_path: Path, page_size: int = 10) -> VMClient:
    config = tmp_path / "kubeconfig"
    config.write_text(fake.kubeconfig())
    return VMClient.from_config(config, page_size=page_size)[0]


def test_shard_parse_and_errors():
    assert Shard.parse("2/5") == Shard(2, 5)
    assert Shard.parse("job/3", {"JOB_COMPLETION_INDEX": "1"}) == Shard(1, 3)
    for bad in ("5/5", "-1/2", "1", "a/b", "1/0"):
        with pytest.raises(ValueError):
            Shard.parse(bad)
    with pytest.raises(ValueError, match="JOB_COMPLETION_INDEX"):
        Shard.parse("job/3", {})


def test_shards_partition_every_vm_the_same_way_every_time():
    keys = [(f"ns-{i % 7}", f"vm-{i}") for i in range(2000)]
    shards = [Shard(i, 4) for i in range(4)]
    owners = [[s.holds(*k) for s in shards].index(True) for k in keys]
    assert all([s.holds(*k) for s in shards].count(True) == 1 for k in keys)
    assert owners == [[s.holds(*k) for s in shards].index(True) for k in keys]  # stable
    sizes = [owners.count(i) for i in range(4)]
    assert min(sizes) > 400  # spread out
    assert Shard(0, 4).holds("ns-1", "vm-1") == Shard(0, 4).holds("ns-1", "vm-1")


def test_select_pages_and_covers_each_vm_once_across_an_expired_token(fake, tmp_path):
    for i in range(35):
        fake.add(vm(f"vm-{i:02d}", f"ns-{i % 3}"))
    client = client_for(fake, tmp_path)
    seen, totals = [], []
    for obj in select(client, None, on_total=totals.append):
        seen.append(obj["metadata"]["name"])
        assert obj["kind"] == "VirtualMachine"  # list items are completed for a PUT
        if len(seen) == 15:
            fake.compact()  # the next continue token is 410 Expired: the list starts again
    assert sorted(seen) == [f"vm-{i:02d}" for i in range(35)] and len(seen) == 35
    assert totals[0] == 35 and len(totals) == 2  # the restarted list reports its size again
    assert fake.count("GET /apis/kubevirt.io/v1/virtualmachines") >= 5  # paged (limit 10)


def test_select_one_namespace_and_a_shard(fake, tmp_path):
    for i in range(30):
        fake.add(vm(f"vm-{i:02d}", f"ns-{i % 3}"))
    client = client_for(fake, tmp_path)
    assert {o["metadata"]["namespace"] for o in select(client, "ns-1")} == {"ns-1"}
    parts = [[o["metadata"]["name"] for o in select(client, None, Shard(i, 3))] for i in range(3)]
    assert sorted(sum(parts, [])) == sorted(f"vm-{i:02d}" for i in range(30))
