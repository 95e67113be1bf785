"""serve --workers N: N complete servers on one port (SO_REUSEPORT) under a supervisor; /metrics adds
them up; SIGTERM drains every worker; a worker that dies is replaced; each worker reloads the certificate."""
from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import httpx
import orjson
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from instancetype_webhook.certs import generate, write_bundle
from instancetype_webhook.server.workers import merge_metrics
from tests.kit.builders import review
from tests.kit.cli import run_cli
from tests.kit.server import make_certs, serve
from tests.kit.tls import served_cert, trusting
from tests.kit.wait import wait_for

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"}}


def children(pid: int) -> set[int]:
    return {int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()}



def test_merge_metrics_adds_series_and_keeps_the_largest_configuration():
    one = ('# TYPE instancetype_webhook_requests counter\n'
           'instancetype_webhook_requests_total{endpoint="mutate"} 3.0\n'
           'instancetype_webhook_requests_created{endpoint="mutate"} 1.7e9\n'
           '# TYPE instancetype_webhook_cluster_configuration_generation gauge\n'
           'instancetype_webhook_cluster_configuration_generation 2.0\n')
    two = one.replace("} 3.0", "} 4.0").replace("generation 2.0", "generation 3.0")
    samples = {(s.name, tuple(s.labels.items())): s.value for f in merge_metrics([one, two]) for s in f.samples}
    assert samples == {("instancetype_webhook_requests_total", (("endpoint", "mutate"),)): 7.0,
                       ("instancetype_webhook_cluster_configuration_generation", ()): 3.0}


def test_two_workers_answer_on_one_port_and_drain_on_sigterm(tmp_path: Path):
    with serve(tmp_path, "--workers", "2", "--policy", "expand", "--shutdown-delay", "1") as server:
        workers = children(server.proc.pid)
        assert len(workers) == 2
        body = orjson.dumps(review(POD, group="", kind="Pod"))
        for _ in range(20):  # a new connection each: the kernel spreads them over the workers
            with server.client() as client:
                resp = client.post("/validate", content=body)
                assert resp.status_code == 200 and resp.json()["response"]["allowed"]
        text = httpx.get(server.metrics_url + "/metrics", timeout=5).text
        assert 'instancetype_webhook_requests_total{endpoint="validate",kind="Pod",operation="CREATE",' \
               'outcome="skipped"} 20.0' in text
        assert "instancetype_webhook_requests_in_flight 0.0" in text
        logs = server.logs()
        assert "worker 0)" in logs and "worker 1)" in logs

        with server.client() as client:
            assert client.get("/readyz").status_code == 200
            server.proc.send_signal(signal.SIGTERM)
            time.sleep(0.3)
            ready = client.get("/readyz")  # this connection's worker drains too
            assert ready.status_code == 503 and ready.json()["reason"] == "draining"
            assert client.post("/validate", content=body).status_code == 200  # still answered while draining
        assert server.proc.wait(15) == 0
        assert not any(Path(f"/proc/{pid}").exists() for pid in workers)
        assert "Traceback" not in server.logs()


def test_a_worker_that_dies_is_replaced(tmp_path: Path):
    with serve(tmp_path, "--workers", "2") as server:
        first = children(server.proc.pid)
        victim = min(first)
        os.kill(victim, signal.SIGKILL)  # as the OOM killer would, right after the start
        wait_for(lambda: len(children(server.proc.pid) - {victim}) == 2, 15)
        body = orjson.dumps(review(POD, group="", kind="Pod"))
        wait_for(lambda: all(_answers(server, body) for _ in range(6)), 15)
        assert "starting it again" in server.logs()


def _answers(server, body: bytes) -> bool:
    try:
        with server.client() as client:
            return client.post("/validate", content=body).status_code == 200
    except httpx.HTTPError:
        return False


def test_every_worker_reloads_the_certificate(tmp_path: Path):
    first = make_certs(tmp_path / "a")
    second = generate(["localhost", "127.0.0.1"])
    second_ca = write_bundle(second, tmp_path / "b", overwrite=True)["ca.crt"]
    both = trusting(first.ca, second_ca)
    new = x509.load_pem_x509_certificate(second.cert_pem).public_bytes(serialization.Encoding.DER)
    with serve(tmp_path, "--workers", "2", certs=first,
               env={"INSTANCETYPE_WEBHOOK_TLS_RELOAD_INTERVAL": "0.2"}) as server:
        write_bundle(second, first.ca.parent, overwrite=True)
        time.sleep(1.5)
        served = {served_cert(server.url, both) for _ in range(16)}  # new connections land on both workers
        assert served == {new}
        text = httpx.get(server.metrics_url + "/metrics", timeout=5).text
        assert "instancetype_webhook_tls_reloads_total 2.0" in text  # one reload in each worker


def test_bad_settings_stop_the_supervisor_with_the_workers_status(tmp_path: Path):
    certs = make_certs(tmp_path / "certs")
    proc = run_cli("serve", "--workers", "2", "--host", "127.0.0.1", "--port", "0", "--metrics-port", "0",
                   "--tls-cert", str(certs.cert), "--tls-key", str(certs.key), "--catalog", str(tmp_path / "missing"),
                   timeout=60)
    assert proc.code == 2
    assert "serve: worker" in proc.err and "missing" in proc.err
