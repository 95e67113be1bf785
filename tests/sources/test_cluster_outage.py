"""The reference cache through an API-server outage, against the strict fake API server: the cache says
when it cannot vouch for itself (synced, ready, the staleness gauge), answers nothing stale meanwhile, and
catches up as soon as the API server is back."""
from __future__ import annotations

import time

from prometheus_client import CollectorRegistry

from instancetype_webhook.kubevirt.source import CLUSTER_INSTANCETYPE, INSTANCETYPE
from instancetype_webhook.server.metrics import Metrics, State
from instancetype_webhook.sources.cluster import Backoff, ClusterSource, SourceUnavailable
from tests.kit.builders import instancetype
from tests.kit.wait import wait_for


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
