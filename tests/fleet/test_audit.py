"""instancetype_webhook.fleet.audit: every stored VM of a selection (the fake API server) judged by the
webhook's own function, read-only; the totals and per-VM callbacks a progress bar follows."""
from __future__ import annotations

from pathlib import Path

from instancetype_webhook.admission.context import ReviewContext
from instancetype_webhook.fleet.audit import audit
from instancetype_webhook.fleet.selection import Shard
from instancetype_webhook.sources.catalog import load_catalog
from instancetype_webhook.sources.kube import VMClient
from tests.fakeapi.apiserver import FakeAPIServer
from tests.kit.fleet_cluster import vm

SOURCE = load_catalog()


def client_for(fake: FakeAPIServer, tmp_path: Path) -> VMClient:
    return VMClient.from_config(fake.kubeconfig_file(tmp_path), page_size=2)[0]


def populate(fake: FakeAPIServer) -> None:
    fake.add(vm("flat", "apps", None, None))
    fake.add(vm("typed", "apps", "u1.medium", "fedora"))
    fake.add(vm("gone", "apps", "gone", None))
    fake.add(vm("other", "web", "u1.small", None))


def test_every_vm_of_the_namespace_is_judged_in_list_order(fake, tmp_path):
    populate(fake)
    findings = audit(client_for(fake, tmp_path), ReviewContext(source=SOURCE, policy="expandAll"), "apps")
    assert [(f.name, f.action) for f in findings] == [("flat", "unchanged"), ("gone", "unresolved"),
                                                      ("typed", "flatten")]
    assert all(f.namespace == "apps" for f in findings)


def test_the_policy_decides_and_nothing_is_written(fake, tmp_path):
    populate(fake)
    client = client_for(fake, tmp_path)
    kept = audit(client, ReviewContext(source=SOURCE, policy="reference"), None)
    assert {f.name: f.action for f in kept}["typed"] == "skip"
    assert len(kept) == 4
    assert fake.count("PUT ") == fake.count("POST ") == fake.count("PATCH ") == 0
    assert fake.get("virtualmachines", "typed", "apps")["spec"]["instancetype"] == {"name": "u1.medium"}


def test_callbacks_see_the_total_and_each_finding(fake, tmp_path):
    populate(fake)
    totals: list[int] = []
    seen: list[str] = []
    findings = audit(client_for(fake, tmp_path), ReviewContext(source=SOURCE, policy="expandAll"), None,
                     on_total=totals.append, on_vm=lambda f: seen.append(f.name))
    assert seen == [f.name for f in findings] and len(seen) == 4
    assert totals and totals[-1] == 4


def test_a_shard_audits_only_its_vms(fake, tmp_path):
    populate(fake)
    client, ctx = client_for(fake, tmp_path), ReviewContext(source=SOURCE, policy="expandAll")
    shards = [audit(client, ctx, None, Shard(i, 2)) for i in range(2)]
    names = [sorted(f.name for f in found) for found in shards]
    assert sorted(names[0] + names[1]) == ["flat", "gone", "other", "typed"]
    assert all(Shard(i, 2).holds(f.namespace, f.name) for i, found in enumerate(shards) for f in found)


def test_an_empty_selection_has_no_findings(fake, tmp_path):
    assert audit(client_for(fake, tmp_path), ReviewContext(source=SOURCE, policy="expandAll"), "none") == []
