"""Metrics: the per-review counters as Prometheus text (what /metrics serves)."""
from __future__ import annotations

from prometheus_client import generate_latest

from instancetype_webhook.server.metrics import Metrics


def text(metrics: Metrics) -> str:
    return generate_latest(metrics.registry).decode()


def test_requests_latency_and_in_flight():
    m = Metrics()
    m.observe("mutate", "CREATE", "VirtualMachine", "patched", 0.0007)
    m.observe("mutate", "CREATE", "VirtualMachine", "patched", 0.001)  # on a bound: that bucket (le is <=)
    m.observe("mutate", "CREATE", "VirtualMachine", "patched", 20.0)  # past the last bound: +Inf only
    m.observe("validate", "UPDATE", "VirtualMachine", "denied", 0.003)
    m.in_flight = 2
    out = text(m)
    assert ('instancetype_webhook_requests_total{endpoint="mutate",kind="VirtualMachine",operation="CREATE",'
            'outcome="patched"} 3.0') in out
    assert ('instancetype_webhook_requests_total{endpoint="validate",kind="VirtualMachine",operation="UPDATE",'
            'outcome="denied"} 1.0') in out
    assert 'instancetype_webhook_request_duration_seconds_bucket{endpoint="mutate",le="0.0005"} 0.0' in out
    assert 'instancetype_webhook_request_duration_seconds_bucket{endpoint="mutate",le="0.001"} 2.0' in out
    assert 'instancetype_webhook_request_duration_seconds_bucket{endpoint="mutate",le="10.0"} 2.0' in out
    assert 'instancetype_webhook_request_duration_seconds_bucket{endpoint="mutate",le="+Inf"} 3.0' in out
    assert 'instancetype_webhook_request_duration_seconds_count{endpoint="mutate"} 3.0' in out
    assert 'instancetype_webhook_request_duration_seconds_sum{endpoint="mutate"} 20.0017' in out
    assert 'instancetype_webhook_request_duration_seconds_bucket{endpoint="validate",le="0.005"} 1.0' in out
    assert "instancetype_webhook_requests_in_flight 2.0" in out


def test_rare_events_keep_their_counters():
    m = Metrics()
    m.error("validate", "bad_request")
    m.tls_reloads.inc()
    out = text(m)
    assert 'instancetype_webhook_errors_total{endpoint="validate",reason="bad_request"} 1.0' in out
    assert "instancetype_webhook_tls_reloads_total 1.0" in out
    assert "instancetype_webhook_requests_in_flight 0.0" in out
