"""The live-cluster source against a fake API server speaking the real list/watch protocol; and the reference
cache through an API-server outage: the cache says when it cannot vouch for itself (synced, ready, the
staleness gauge), answers nothing stale meanwhile, and catches up as soon as the API server is back."""
from __future__ import annotations

import time

import pytest
from prometheus_client import CollectorRegistry

from instancetype_webhook.kubevirt.source import CLUSTER_INSTANCETYPE, INSTANCETYPE, PREFERENCE
from instancetype_webhook.server.metrics import Metrics, State
from instancetype_webhook.sources.cluster import Backoff, ClusterSource, SourceUnavailable
from tests.kit.builders import instancetype
from tests.kit.wait import wait_for


def test_list_then_serve_from_cache_without_remote_calls(fake, source_for):
    fake.add(instancetype("u1.small"))
    fake.add(instancetype("mine", 2, namespace="apps"))
    fake.add({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "apps", "labels": {"a": "b"}}})
    src = source_for(fake)
    assert src.wait_synced(10) and src.synced
    gets_before = fake.count("GET ")
    for _ in range(50):
        obj = src.get(CLUSTER_INSTANCETYPE, "u1.small")
        assert obj["spec"]["cpu"]["guest"] == 1
        assert obj["kind"] == "VirtualMachineClusterInstancetype"  # list items carry no kind: filled in
        assert src.get(INSTANCETYPE, "mine", "apps")["spec"]["cpu"]["guest"] == 2
    assert fake.count("GET ") == gets_before  # nothing remote on the hot path
    assert src.get(INSTANCETYPE, "mine", "other") is None  # a miss asks the server once: 404 -> None
    assert fake.count("GET ") == gets_before + 1
    assert src.namespace_labels("apps") == {"a": "b"}


def test_not_synced_until_listed(fake, source_for):
    fake.stop()
    src = source_for(fake)
    time.sleep(0.5)
    assert not src.synced
    fake.start()  # same port
    assert src.wait_synced(10)


def test_watch_events_update_the_cache(fake, source_for):
    src = source_for(fake)
    assert src.wait_synced(10)
    fake.add(instancetype("later", 4))
    wait_for(lambda: (src.informers[CLUSTER_INSTANCETYPE].store.get(("", "later")) or {}).get("spec", {}).get(
        "cpu", {}).get("guest") == 4)
    fake.add(instancetype("later", 8))
    wait_for(lambda: src.informers[CLUSTER_INSTANCETYPE].store[("", "later")]["spec"]["cpu"]["guest"] == 8)
    fake.delete(instancetype("later"))
    wait_for(lambda: ("", "later") not in src.informers[CLUSTER_INSTANCETYPE].store)


def test_cache_miss_does_a_live_get(fake, source_for):
    """Create an instance type, then a VM at once: the watch has not delivered it yet."""
    src = source_for(fake)
    assert src.wait_synced(10)
    fake.add(instancetype("just-created", 2, namespace="apps"), notify=False)
    obj = src.get(INSTANCETYPE, "just-created", "apps")
    assert obj and obj["spec"]["cpu"]["guest"] == 2
    gets = fake.count("GET ")
    assert src.get(INSTANCETYPE, "just-created", "apps") is obj  # cached now
    assert fake.count("GET ") == gets


def test_cache_only_answers_from_the_cache_and_refuses_to_fetch(fake, source_for):
    """What the webhook uses to answer on the event loop: a miss raises CacheMiss, asks nothing remote."""
    from instancetype_webhook.kubevirt.source import CacheMiss

    fake.add(instancetype("listed", 2))
    src = source_for(fake)
    assert src.wait_synced(10)
    fake.add(instancetype("unseen", 4, namespace="apps"), notify=False)
    gets = fake.count("GET ")
    with src.cache_only():
        assert src.get(CLUSTER_INSTANCETYPE, "listed")["spec"]["cpu"]["guest"] == 2
        with pytest.raises(CacheMiss):
            src.get(INSTANCETYPE, "unseen", "apps")
        with pytest.raises(CacheMiss):
            src.get_revision("some-revision", "apps")
    assert fake.count("GET ") == gets
    assert src.get(INSTANCETYPE, "unseen", "apps")["spec"]["cpu"]["guest"] == 4  # outside: a live GET


def test_410_gone_relists(fake, source_for):
    fake.add(instancetype("a"))
    src = source_for(fake)
    assert src.wait_synced(10)
    informer = src.informers[CLUSTER_INSTANCETYPE]
    lists = informer.relists
    fake.add(instancetype("b"), notify=False)  # missed by the watch...
    fake.delete(instancetype("a"), notify=False)
    fake.compact()
    fake.drop_watches()  # ...the reconnect from the old resourceVersion gets ERROR 410 and relists
    wait_for(lambda: informer.relists > lists)
    wait_for(lambda: ("", "b") in informer.store and ("", "a") not in informer.store)
    assert int(informer.resource_version) >= fake.rv - 1


def test_stop_ends_every_watch_thread_before_it_returns(fake, source_for, caplog):
    """A watch thread that outlived stop() logged into whatever came next (a closed capture, another test)."""
    src = source_for(fake)
    assert src.wait_synced(10)
    threads = list(src._threads)
    assert threads and all(thread.is_alive() for thread in threads)
    fake.compact()  # what the threads see next, if still running: a 410 on their reconnect
    src.stop()
    assert [thread.name for thread in threads if thread.is_alive()] == []
    caplog.clear()
    fake.drop_watches()
    time.sleep(0.3)
    assert [r.getMessage() for r in caplog.records if r.name.startswith("instancetype_webhook")] == []


def test_dropped_connection_resumes_from_last_resource_version(fake, source_for):
    src = source_for(fake)
    assert src.wait_synced(10)
    informer = src.informers[CLUSTER_INSTANCETYPE]
    lists = informer.relists
    for i in range(3):
        fake.drop_watches()
        fake.add(instancetype(f"after-drop-{i}"))
        wait_for(lambda i=i: ("", f"after-drop-{i}") in informer.store)
    assert informer.relists == lists  # resumed, not relisted


def test_server_down_the_cache_is_not_trusted_then_resyncs(fake, source_for):
    """While the watches are broken the cache answers nothing: a lookup is a live GET, and with the API
    server away a retryable refusal (SourceUnavailable), not the object the cache last saw."""
    fake.add(instancetype("kept"))
    src = source_for(fake)
    assert src.wait_synced(10)
    fake.stop()
    wait_for(lambda: not src.informers[CLUSTER_INSTANCETYPE].in_sync)  # its own watch saw the break
    assert not src.synced
    with pytest.raises(SourceUnavailable):
        src.get(CLUSTER_INSTANCETYPE, "kept")
    with pytest.raises(SourceUnavailable):
        src.get(CLUSTER_INSTANCETYPE, "unknown")
    assert src.ready()  # within stale_after: answers are live or refused, none stale
    # The server comes back with a new history (all watches see 410) and new objects.
    fake.compact()
    fake.add(instancetype("new-after-restart"), notify=False)
    fake.start()
    informer = src.informers[CLUSTER_INSTANCETYPE]
    wait_for(lambda: ("", "new-after-restart") in informer.store, timeout=15)
    wait_for(lambda: src.synced)


def test_live_get_is_bounded_by_the_lookup_timeout(fake, source_for):
    src = source_for(fake, lookup_timeout=0.5)
    assert src.wait_synced(10)
    fake.hang_gets = 3
    start = time.monotonic()
    with pytest.raises(SourceUnavailable):
        src.get(PREFERENCE, "slow", "apps")
    assert time.monotonic() - start < 2


def test_revisions_fetched_on_demand_and_cached(fake, source_for):
    rev = {"apiVersion": "apps/v1", "kind": "ControllerRevision",
           "metadata": {"name": "vm-u1-rev", "namespace": "apps"}, "data": instancetype("u1"), "revision": 1}
    fake.add_revision(rev)
    src = source_for(fake)
    assert src.wait_synced(10)
    assert src.get_revision("vm-u1-rev", "apps")["data"]["spec"]["cpu"]["guest"] == 1
    assert src.get_revision("vm-u1-rev", "apps")["data"]["metadata"]["name"] == "u1"
    assert fake.count("GET /apis/apps/v1/namespaces/apps/controllerrevisions/vm-u1-rev") == 1
    assert src.get_revision("nope", "apps") is None


def test_a_live_get_that_races_a_deletion_is_not_cached(fake, source_for):
    """The GET read the object, the DELETED event came in before its answer: caching the answer would keep
    serving a deleted instance type until the next relist."""
    import threading

    src = source_for(fake, lookup_timeout=5)
    assert src.wait_synced(10)
    informer = src.informers[CLUSTER_INSTANCETYPE]
    fake.add(instancetype("doomed"), notify=False)  # exists, but no watch has seen it: a cache miss does a live GET
    fake.hang_gets = 1.5
    found: list = []
    lookup = threading.Thread(target=lambda: found.append(src.get(CLUSTER_INSTANCETYPE, "doomed")))
    lookup.start()
    time.sleep(0.3)
    fake.delete(instancetype("doomed"))  # watchers see DELETED while the GET's answer is on its way
    wait_for(lambda: informer.resource_version == str(fake.rv))  # the DELETED event was applied
    lookup.join()
    fake.hang_gets = 0
    assert found and found[0]["metadata"]["name"] == "doomed"  # this lookup got the answer it read
    assert ("", "doomed") not in informer.store
    assert src.get(CLUSTER_INSTANCETYPE, "doomed") is None


# -- through an API-server outage ---------------------------------------------------------------------

def cpu(src: ClusterSource, name: str, namespace: str | None = None) -> int | str:
    """The guest CPUs of the instance type a lookup answers now, or "refused"."""
    kind = INSTANCETYPE if namespace else CLUSTER_INSTANCETYPE
    try:
        obj = src.get(kind, name, namespace)
    except SourceUnavailable:
        return "refused"
    return obj["spec"]["cpu"]["guest"] if obj else "missing"


def gauges(src: ClusterSource) -> CollectorRegistry:
    metrics = Metrics()
    metrics.state(State(ready=src.ready, synced=lambda: src.synced, cache_objects=dict,
                        certificate_not_after=lambda: None, out_of_sync=src.out_of_sync))
    return metrics.registry


def out_of_sync(registry: CollectorRegistry, resource: str) -> float:
    value = registry.get_sample_value("instancetype_webhook_reference_cache_out_of_sync_seconds",
                                      {"resource": resource})
    assert value is not None
    return value


def test_backoff_is_client_gos_doubling_capped_and_reset_after_a_quiet_minute():
    backoff = Backoff(maximum=5.0, jitter=0.0)
    assert [backoff.next() for _ in range(5)] == [0.8, 1.6, 3.2, 5.0, 5.0]
    backoff.last_failure -= 61  # no failure for a minute: a watch held
    assert backoff.next() == 0.8
    jittered = Backoff(maximum=30.0)
    delays = [jittered.next() for _ in range(3)]
    assert all(base <= delay <= 2 * base for base, delay in zip((0.8, 1.6, 3.2), delays, strict=True))
    assert len(set(delays)) == 3


def test_an_outage_is_told_and_nothing_stale_is_answered(fake, source_for):
    fake.add(instancetype("edited", 2))
    src = source_for(fake, stale_after=1.0)
    assert src.wait_synced(10) and src.synced and src.ready()
    registry = gauges(src)
    assert registry.get_sample_value("instancetype_webhook_reference_cache_synced") == 1
    assert out_of_sync(registry, "virtualmachineclusterinstancetypes") == 0
    assert cpu(src, "edited") == 2

    fake.stop()
    wait_for(lambda: not src.informers[CLUSTER_INSTANCETYPE].in_sync)  # its own watch saw the break
    assert registry.get_sample_value("instancetype_webhook_reference_cache_synced") == 0
    assert cpu(src, "edited") == "refused"  # the cached object is not answered while the watch is down
    wait_for(lambda: not src.ready())  # past stale_after: /readyz is false
    assert out_of_sync(registry, "virtualmachineclusterinstancetypes") > 1.0
    status = src.cache_status()["virtualmachineclusterinstancetypes"]
    assert status["inSync"] is False and status["reason"]

    # changed while the API server is away; its first GETs after the return fail
    fake.add(instancetype("edited", 4))
    fake.add(instancetype("created-meanwhile", 6, namespace="apps"))
    fake.failing_gets = 4
    fake.start()
    seen: list[int | str] = []
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and seen[-1:] != [4]:
        seen.append(cpu(src, "edited"))
        time.sleep(0.02)
    assert seen[-1] == 4, seen  # the new spec within 5 s of the return
    assert 2 not in seen  # never the old one
    assert cpu(src, "created-meanwhile", "apps") == 6
    fake.add(instancetype("edited", 8))  # right after the return
    wait_for(lambda: cpu(src, "edited") == 8, timeout=5)
    wait_for(lambda: src.synced and src.ready(), timeout=5)
    assert registry.get_sample_value("instancetype_webhook_reference_cache_synced") == 1
    assert out_of_sync(registry, "virtualmachineclusterinstancetypes") == 0
    assert src.informers[CLUSTER_INSTANCETYPE].store[("", "edited")]["spec"]["cpu"]["guest"] == 8


def test_dropped_watches_are_out_of_sync_until_they_hold_again(fake, source_for):
    fake.add(instancetype("a", 1))
    src = source_for(fake)
    assert src.wait_synced(10)
    informer = src.informers[CLUSTER_INSTANCETYPE]
    fake.failing_gets = 1_000_000  # every reconnect fails: the drop is visible
    fake.drop_watches()
    wait_for(lambda: not informer.in_sync)
    assert not src.synced and cpu(src, "a") == "refused"
    fake.failing_gets = 0
    fake.add(instancetype("a", 3))
    wait_for(lambda: informer.in_sync, timeout=5)
    wait_for(lambda: cpu(src, "a") == 3, timeout=5)
    wait_for(lambda: src.synced, timeout=5)  # the other informers too


def test_a_deletion_during_the_gap_is_not_answered(fake, source_for):
    fake.add(instancetype("doomed", 2))
    src = source_for(fake)
    assert src.wait_synced(10)
    fake.stop()
    wait_for(lambda: not src.informers[CLUSTER_INSTANCETYPE].in_sync)
    fake.delete(instancetype("doomed"), notify=False)
    fake.compact()
    fake.start()
    wait_for(lambda: cpu(src, "doomed") == "missing", timeout=5)
    wait_for(lambda: src.synced, timeout=5)
    assert ("", "doomed") not in src.informers[CLUSTER_INSTANCETYPE].store


def test_an_answer_from_the_returned_server_wakes_the_waiting_informers(fake, source_for):
    """The informers wait up to backoff_max between attempts; the first answer the API server gives after
    a silence (here a live GET) makes them reconnect at once."""
    src = source_for(fake, backoff_max=30.0)
    assert src.wait_synced(10)
    fake.stop()
    wait_for(lambda: not src.synced)
    for informer in src.informers.values():
        informer._backoff.jitter, informer._backoff.current = 0.0, 30.0
    time.sleep(2.5)  # every informer has failed again and now waits 30 s
    fake.start()
    assert cpu(src, "nothing-here") == "missing"  # the live GET gets through
    wait_for(lambda: src.synced, timeout=5)


def _messages(caplog, name: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "instancetype_webhook.cluster"
            and r.getMessage().startswith(name + ":")]


def test_a_silent_watch_is_out_of_sync_then_relisted_and_answers_fresh_data(fake, source_for, caplog):
    """A watch that dies without a reset (a half-open connection): nothing comes, not even the end. It is
    noticed once nothing (no event, no bookmark) was read for 1.25 bookmark intervals: out of sync, with
    why, then relisted; the relist has what the silent watch never delivered."""
    caplog.set_level("INFO", logger="instancetype_webhook.cluster")
    fake.bookmark_interval = 0.1
    fake.add(instancetype("it", 1))
    src = source_for(fake, bookmark_interval=0.4)
    assert src.watch_idle_timeout == 0.5
    assert src.wait_synced(10)
    informer = src.informers[CLUSTER_INSTANCETYPE]
    wait_for(lambda: informer.bookmarks > 0, what="a bookmark")  # this server sends them
    relists = informer.relists
    caplog.clear()
    fake.mute_watches()  # every watch, open or new, goes silent and stays open
    fake.add(instancetype("it", 2))  # never delivered by the muted watch
    wait_for(lambda: informer.silences > 0, what="the silent watch noticed")
    wait_for(lambda: informer.relists > relists, what="a relist")
    fake.unmute_watches()
    wait_for(lambda: src.synced, what="in sync again")
    assert "watch silent for 0.5s" in informer.why and "presumed dead" in informer.why
    said = _messages(caplog, "virtualmachineclusterinstancetypes")
    silent = next(i for i, m in enumerate(said) if "presumed dead" in m and m.endswith("relisting"))
    assert any("listed" in m and "(cache, 1 page)" in m for m in said[silent + 1:]), said  # after it, from the cache
    gets = fake.count("GET ")
    assert src.get(CLUSTER_INSTANCETYPE, "it")["spec"]["cpu"]["guest"] == 2  # fresh, from the cache
    assert fake.count("GET ") == gets


def test_a_silent_watch_on_a_server_without_bookmarks_is_resumed(fake, source_for):
    """No bookmark ever came: the server may send none, so a silent watch is resumed from its resourceVersion
    (the events it missed come first), not relisted; it is out of sync meanwhile all the same."""
    fake.bookmark_interval = 3600
    src = source_for(fake, bookmark_interval=2.0)  # 2.5 s of silence: unmuted well before a second one
    assert src.wait_synced(10)
    informer = src.informers[CLUSTER_INSTANCETYPE]
    relists = informer.relists
    fake.mute_watches()
    fake.add(instancetype("while-muted", 3))
    wait_for(lambda: informer.silences > 0, what="the silent watch noticed")
    wait_for(lambda: not informer.in_sync, what="out of sync")  # until the resumed watch gets through
    assert not src.synced
    fake.unmute_watches()
    wait_for(lambda: ("", "while-muted") in informer.store, what="the missed event")
    assert informer.relists == relists and informer.bookmarks == 0
    assert "no bookmark seen yet" in informer.why


def test_the_first_list_is_one_answer_from_the_api_servers_cache(fake, source_for):
    """resourceVersion=0 and no limit: served from the watch cache in one response, nothing read from etcd
    but the ControllerRevisions' one-item list (only its resourceVersion is wanted)."""
    for i in range(1200):  # more than two pages of LIST_PAGE
        fake.add(instancetype(f"big-{i:04}", 1 + i % 4), notify=False)
    src = source_for(fake)
    assert src.wait_synced(20)
    informer = src.informers[CLUSTER_INSTANCETYPE]
    assert len(informer.store) == 1200 and informer.store[("", "big-0007")]["spec"]["cpu"]["guest"] == 4
    assert informer.store[("", "big-0007")]["kind"] == "VirtualMachineClusterInstancetype"
    cached = [i for i in src.informers.values() if i.keep]
    assert fake.list_reads == {"cache": len(cached), "etcd": 1}


def test_a_cache_that_cannot_list_falls_back_to_the_paged_consistent_list(fake, source_for, caplog):
    """A watch cache not ready (429 "storage is (re)initializing"): the list is the consistent one, in pages."""
    caplog.set_level("INFO", logger="instancetype_webhook.cluster")
    for i in range(1200):
        fake.add(instancetype(f"big-{i:04}"), notify=False)
    fake.cache_list_errors = 100
    src = source_for(fake)
    assert src.wait_synced(20)
    informer = src.informers[CLUSTER_INSTANCETYPE]
    assert len(informer.store) == 1200 and fake.list_reads["cache"] == 0
    assert fake.list_reads["etcd"] >= 3 + len(src.informers) - 1  # 3 pages of 500 here, one at least elsewhere
    said = _messages(caplog, "virtualmachineclusterinstancetypes")
    assert any("resourceVersion=0) failed (HTTP 429" in m for m in said), said
    assert any("listed 1200 objects" in m and "(etcd, 3 pages)" in m for m in said), said


def test_after_a_410_the_relist_is_the_consistent_one(fake, source_for):
    src = source_for(fake)
    assert src.wait_synced(10)
    informer = src.informers[CLUSTER_INSTANCETYPE]
    relists, etcd = informer.relists, fake.list_reads["etcd"]
    fake.add(instancetype("missed"), notify=False)
    fake.compact()
    fake.drop_watches()  # the resumed watch gets 410: its resourceVersion is unavailable, the cache is not asked
    wait_for(lambda: informer.relists > relists and ("", "missed") in informer.store)
    assert fake.list_reads["etcd"] > etcd and informer.list_from == informer.resource_version


def test_watch_sockets_have_tcp_keepalive(fake, source_for):
    import socket

    src = source_for(fake)
    assert src.wait_synced(10)
    informer = src.informers[CLUSTER_INSTANCETYPE]
    response = wait_for(lambda: informer._response, what="an open watch")
    assert response.connection.sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE) == 1
