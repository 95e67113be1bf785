"""instancetype_webhook.fleet.events and `sweep --events` on the strict fake API server (events.k8s.io/v1 validated as
the real server does): Normal and Warning events, series aggregation across runs and workers, a
finished series starting afresh, and 403 turning events off without failing the sweep."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from instancetype_webhook.fleet.events import CONTROLLER, Recorder, build, continued, micro_time
from instancetype_webhook.fleet.finding import Finding
from instancetype_webhook.sources.kube import VMClient
from tests.fakeapi.apiserver import FakeAPIServer
from tests.fakeapi.schema import event_errors
from tests.kit.cli import run_main
from tests.kit.fleet_cluster import catalog_fake, vm

NOW = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)


def test_flattened_is_normal_and_cannot_is_a_warning_with_the_reason():
    flat = build(Finding("ns", "a", "flatten", ops=7, policy="expand", uid="u1").reference(), "expand", NOW, "x")
    assert flat is not None and (flat["type"], flat["reason"], flat["action"]) == ("Normal", "Flattened", "Flatten")
    assert flat["note"].startswith("flattened under expand: 7 patch operations")
    assert flat["regarding"] == {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "namespace": "ns",
                                 "name": "a", "uid": "u1"}
    assert flat["eventTime"] == "2026-01-02T03:04:05.678901Z" and flat["reportingController"] == CONTROLLER
    assert event_errors(flat) == []
    refused = Finding("ns", "a", "refuse", reason="conflicts with u1.small", uid="u1").reference()
    bad = build(refused, "expand", NOW, "x")
    assert bad is not None and (bad["type"], bad["reason"], bad["note"]) == ("Warning", "FlattenRefused",
                                                                             "conflicts with u1.small")
    assert build(Finding("ns", "a", "unresolved", reason="nf").reference(), "e", NOW, "x")["reason"] == \
        "ReferenceNotFound"
    assert build(Finding("ns", "a", "unchanged").reference(), "expand", NOW, "x") is None
    assert build(Finding("ns", "a", "skip").reference(), "expand", NOW, "x") is None
    long = build(Finding("ns", "a", "failed", reason="é" * 2000).reference(), "e", NOW, "x")
    assert len(long["note"].encode()) <= 1024 and event_errors(long) == []


def test_the_same_event_has_the_same_name_and_another_note_another():
    f = Finding("ns", "a", "refuse", reason="one", uid="u1").reference()
    def name(finding: dict, when: datetime = NOW, instance: str = "x") -> str:
        return build(finding, "e", when, instance)["metadata"]["name"]

    assert name(f) == name(f, NOW + timedelta(hours=1), "y")  # found again by a later run, another pod
    assert name(f) != name({**f, "reason": "two"}) and name(f).startswith("a.")


def test_a_repeat_within_the_window_extends_the_series_else_starts_again():
    fresh = build(Finding("ns", "a", "refuse", reason="r").reference(), "e", NOW, "x")
    stored = {**fresh, "metadata": {**fresh["metadata"], "resourceVersion": "5"}}
    two = continued(stored, fresh, NOW + timedelta(minutes=5))
    assert two["series"] == {"count": 2, "lastObservedTime": micro_time(NOW + timedelta(minutes=5))}
    assert two["eventTime"] == fresh["eventTime"]  # the first occurrence stays
    three = continued(two, fresh, NOW + timedelta(minutes=10))  # 5 minutes after the last one
    assert three["series"]["count"] == 3
    later = NOW + timedelta(minutes=17)
    again = continued(three, build(Finding("ns", "a", "refuse", reason="r").reference(), "e", later, "x"), later)
    assert "series" not in again and again["eventTime"] == micro_time(later)
    assert again["metadata"]["resourceVersion"] == "5"


def conflicting(name: str, ns: str) -> dict[str, Any]:
    body = vm(name, ns)
    body["spec"]["template"]["spec"]["domain"]["cpu"] = {"cores": 3}
    return body


@pytest.fixture
def cluster(tmp_path: Path):
    fake = catalog_fake()
    fake.add(vm("web", "team-a"))
    fake.add(vm("app", "team-a"))
    fake.add(conflicting("db", "team-a"))
    fake.add(vm("legacy", "team-b", "retired", None))
    fake.add(vm("plain", "team-b", None, None))
    config = fake.kubeconfig_file(tmp_path)
    try:
        yield fake, config
    finally:
        fake.stop()


def sweep(config: str, *args: str) -> tuple[int, str]:
    result = run_main("sweep", "--kubeconfig", config, "--progress", "never", "-A", "--policy", "expand", *args)
    return result.code, result.err


def events(fake: FakeAPIServer) -> dict[str, dict[str, Any]]:
    return {e["regarding"]["name"]: e for e in fake.all("Event")}


def test_sweep_events_on_the_vms_then_a_series_not_new_objects(cluster):
    fake, config = cluster
    code, err = sweep(config, "--events")
    assert code == 1 and "sweep: events: 4 recorded, 0 added to a series" in err
    got = events(fake)
    assert {n: (e["type"], e["reason"]) for n, e in got.items()} == {
        "web": ("Normal", "Flattened"), "app": ("Normal", "Flattened"), "db": ("Warning", "FlattenRefused"),
        "legacy": ("Warning", "ReferenceNotFound")}
    assert got["db"]["regarding"]["uid"] == fake.get("VirtualMachine", "db", "team-a")["metadata"]["uid"]
    assert "spec.template.spec.domain.cpu.cores" in got["db"]["note"]
    assert got["legacy"]["metadata"]["namespace"] == "team-b"
    code, err = sweep(config, "--events")  # the flat VMs say nothing; the others repeat
    assert "events: 0 recorded, 2 added to a series" in err
    again = events(fake)
    assert len(fake.all("Event")) == 4
    assert again["db"]["series"]["count"] == 2 and again["db"]["eventTime"] == got["db"]["eventTime"]
    assert again["web"] == got["web"]


def test_a_finished_series_starts_a_fresh_event(cluster):
    fake, config = cluster
    sweep(config, "--events")
    old = events(fake)["db"]
    stale = micro_time(datetime.now(UTC) - timedelta(minutes=30))
    fake.add({**old, "eventTime": stale, "series": {"count": 5, "lastObservedTime": stale}})
    sweep(config, "--events")
    now = events(fake)["db"]
    assert "series" not in now and now["eventTime"] > stale and now["metadata"]["name"] == old["metadata"]["name"]


def test_no_events_without_the_flag_or_in_a_dry_run(cluster):
    fake, config = cluster
    sweep(config, "--events", "--dry-run")
    sweep(config)
    assert fake.all("Event") == [] and fake.count("POST /apis/events.k8s.io") == 0


def test_forbidden_events_warn_once_and_the_sweep_goes_on(cluster):
    fake, config = cluster
    fake.forbid("create", "events")
    code, err = sweep(config, "--events", "--concurrency", "1")
    assert code == 1 and fake.all("Event") == []
    assert "events not recorded: events.events.k8s.io is forbidden" in err and 'cannot create resource "events"' in err
    assert fake.count("POST /apis/events.k8s.io") == 1  # turned off after the first 403
    assert fake.get("VirtualMachine", "web", "team-a")["spec"].get("instancetype") is None  # flattened all the same


def test_concurrent_recorders_make_one_series(cluster):
    fake, config = cluster
    client, _ = VMClient.from_config(config)
    client.set_pool_size(8)
    finding = Finding("team-a", "db", "refuse", reason="conflicts", uid="uid-db").reference()
    recorders = [Recorder(client, "expand", f"pod-{i}") for i in range(4)]
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda i: recorders[i % 4].record(finding), range(20)))
    [event] = fake.all("Event")
    assert event["series"]["count"] == 20
    assert sum(r.created + r.continued for r in recorders) == 20 and sum(r.failed for r in recorders) == 0
