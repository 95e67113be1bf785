"""The server's state on /metrics: ready, reference cache synced and its objects, the serving
certificate's notAfter (followed across a reload), and the worker count, from a real server."""
from __future__ import annotations

import time
from pathlib import Path

import httpx
import orjson
from cryptography import x509
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from instancetype_webhook.certs import generate, write_bundle
from instancetype_webhook.server.metrics import Metrics, State
from instancetype_webhook.sources.catalog import load_catalog
from tests.kit.builders import review
from tests.kit.server import make_certs, serve

LOCAL = {"INSTANCETYPE_WEBHOOK_METRICS_HOST": "127.0.0.1", "INSTANCETYPE_WEBHOOK_TLS_RELOAD_INTERVAL": "0.2"}


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def not_after(path: Path) -> float:
    return x509.load_pem_x509_certificate(path.read_bytes()).not_valid_after_utc.timestamp()


def test_state_is_read_at_scrape_time():
    m = Metrics()
    state = {"ready": False, "objects": {"virtualmachineclusterinstancetypes": 3}}
    m.state(State(ready=lambda: state["ready"], synced=lambda: True, cache_objects=lambda: state["objects"],
                  certificate_not_after=lambda: 1.8e9))
    got = samples(generate_latest(m.registry).decode())
    assert got[("instancetype_webhook_ready", ())] == 0
    assert got[("instancetype_webhook_reference_cache_synced", ())] == 1
    assert got[("instancetype_webhook_reference_cache_objects",
                (("resource", "virtualmachineclusterinstancetypes"),))] == 3
    assert got[("instancetype_webhook_tls_certificate_not_after_timestamp_seconds", ())] == 1.8e9
    state["ready"] = True
    assert samples(generate_latest(m.registry).decode())[("instancetype_webhook_ready", ())] == 1


def test_a_real_server_reports_its_state_and_follows_a_new_certificate(tmp_path: Path):
    certs = make_certs(tmp_path / "certs")
    with serve(tmp_path, env=LOCAL, certs=certs) as server:
        got = samples(httpx.get(server.metrics_url + "/metrics", timeout=5).text)
        assert got[("instancetype_webhook_ready", ())] == 1
        assert got[("instancetype_webhook_reference_cache_synced", ())] == 1
        assert got[("instancetype_webhook_workers", ())] == 1
        assert got[("instancetype_webhook_reference_cache_objects",
                    (("resource", "virtualmachineclusterinstancetypes"),))] > 10  # the bundled catalogue
        assert got[("instancetype_webhook_tls_certificate_not_after_timestamp_seconds", ())] == not_after(certs.cert)
        write_bundle(generate(["localhost", "127.0.0.1"], days=10), certs.cert.parent, overwrite=True)
        deadline = time.monotonic() + 10
        expected = not_after(certs.cert)
        while True:
            got = samples(httpx.get(server.metrics_url + "/metrics", timeout=5).text)
            if got[("instancetype_webhook_tls_certificate_not_after_timestamp_seconds", ())] == expected:
                break
            assert time.monotonic() < deadline, "the reloaded certificate's notAfter never showed"
            time.sleep(0.2)
        assert expected - time.time() < 11 * 86400


def test_denials_are_counted_by_reason(tmp_path: Path):
    """A conflict's cause reason; a missing instance type has no cause: its HTTP code (400, as upstream)."""
    conflicting = {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
                   "metadata": {"name": "db", "namespace": "default"},
                   "spec": {"instancetype": {"name": "u1.small"},
                            "template": {"spec": {"domain": {"cpu": {"cores": 3}, "devices": {}}}}}}
    missing = {**conflicting, "spec": {"instancetype": {"name": "nope"}, "template": {"spec": {"domain": {}}}}}
    with serve(tmp_path, "--policy", "expand", env=LOCAL) as server, server.client() as client:
        for body in (conflicting, conflicting, missing):
            answer = client.post("/mutate", content=orjson.dumps(review(body))).json()["response"]
            assert answer["allowed"] is False
        got = samples(httpx.get(server.metrics_url + "/metrics", timeout=5).text)
    assert got[("instancetype_webhook_denials_total", (("endpoint", "mutate"), ("reason", "FieldValueInvalid")))] == 2
    assert got[("instancetype_webhook_denials_total", (("endpoint", "mutate"), ("reason", "BadRequest")))] == 1


def test_workers_are_counted_and_state_is_not_added_up(tmp_path: Path):
    certs = make_certs(tmp_path / "certs")
    with serve(tmp_path, "--workers", "2", env=LOCAL, certs=certs) as server:
        deadline = time.monotonic() + 20
        while True:  # both workers up and scraped
            got = samples(httpx.get(server.metrics_url + "/metrics", timeout=5).text)
            if got.get(("instancetype_webhook_workers", ())) == 2:
                break
            assert time.monotonic() < deadline
            time.sleep(0.2)
        assert got[("instancetype_webhook_ready", ())] == 1
        assert got[("instancetype_webhook_tls_certificate_not_after_timestamp_seconds", ())] == not_after(certs.cert)
        preferences = sum(o["kind"] == "VirtualMachineClusterPreference" for o in load_catalog().objects())
        assert got[("instancetype_webhook_reference_cache_objects",
                    (("resource", "virtualmachineclusterpreferences"),))] == preferences  # not twice it
