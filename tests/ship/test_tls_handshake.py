"""Certificates from `instancetype-webhook certs` work with the real `instancetype-webhook serve`.

The CLI makes a CA and a serving certificate for the Service; the real server (uvicorn, real TLS)
starts with them on 127.0.0.1; a client that trusts only the generated CA completes a handshake for
the Service's DNS name, as the API server does. Through that connection, the reviews the webhook
configurations' matchConditions skip are shown to get exactly the answer skipping gives: allowed,
no patch, no warning.
"""
from __future__ import annotations

import json
import socket
import ssl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
import yaml
from cryptography import x509

from tests.kit.builders import review
from tests.kit.builders import vm as build_vm
from tests.kit.cli import run_cli
from tests.kit.server import free_port, launch
from tests.kit.ship_checks import match_condition_sends

ROOT = Path(__file__).resolve().parents[2]
SERVICE, NAMESPACE = "instancetype-webhook", "instancetype-webhook"
SERVICE_HOSTS = [SERVICE, f"{SERVICE}.{NAMESPACE}", f"{SERVICE}.{NAMESPACE}.svc",
                 f"{SERVICE}.{NAMESPACE}.svc.cluster.local"]
SVC_DNS = f"{SERVICE}.{NAMESPACE}.svc"


def generate(out: Path, *extra: str) -> str:
    done = run_cli("certs", "--service", SERVICE, "--namespace", NAMESPACE, "--out", str(out), *extra, timeout=60)
    assert done.code == 0, done.err
    return done.out.strip()


def handshake(port: int, ca: Path, server_hostname: str) -> dict:
    """A TLS handshake to 127.0.0.1 that verifies the chain against `ca` and the name `server_hostname`."""
    ctx = ssl.create_default_context(cafile=str(ca))
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw, \
            ctx.wrap_socket(raw, server_hostname=server_hostname) as tls:
        return {"cert": tls.getpeercert(), "version": tls.version()}


@contextmanager
def serve(certs: Path, tmp: Path, *args: str) -> Iterator[int]:
    # not tests.kit.server.serve: ready when the handshake verifies the Service's DNS name, not 127.0.0.1's
    port = free_port()
    cmd = ["serve", "--host", "127.0.0.1", "--port", str(port), "--metrics-port", "0", "--tls-cert",
           str(certs / "tls.crt"), "--tls-key", str(certs / "tls.key"), "--shutdown-delay", "0", *args]
    with launch(tmp, cmd, lambda: bool(handshake(port, certs / "ca.crt", SVC_DNS)), name="serve"):
        yield port


def client(certs: Path) -> httpx.Client:
    return httpx.Client(base_url="https://127.0.0.1", verify=ssl.create_default_context(cafile=str(certs / "ca.crt")),
                        timeout=10)


def post(http: httpx.Client, port: int, path: str, body: dict) -> httpx.Response:
    # Connect to 127.0.0.1 but verify the certificate for the Service's DNS name, as the API server would.
    return http.post(f"https://127.0.0.1:{port}{path}", json=body, extensions={"sni_hostname": SVC_DNS})


@pytest.mark.parametrize("key_args", [(), ("--key-type", "rsa", "--rsa-bits", "3072")], ids=["ecdsa", "rsa"])
def test_generated_certificates_serve_the_service_name(tmp_path, key_args):
    certs = tmp_path / "certs"
    printed = generate(certs, *key_args)
    with serve(certs, tmp_path) as port:
        for name in SERVICE_HOSTS + ["localhost"]:
            result = handshake(port, certs / "ca.crt", name)
            assert result["version"] in ("TLSv1.2", "TLSv1.3")
        sans = {v for k, v in handshake(port, certs / "ca.crt", SVC_DNS)["cert"]["subjectAltName"]}
        assert set(SERVICE_HOSTS) <= sans

        with client(certs) as http:
            health = http.get(f"https://127.0.0.1:{port}/healthz", extensions={"sni_hostname": SVC_DNS})
            assert health.status_code == 200

        # Another name, or a CA other than the generated one, must fail verification.
        with pytest.raises(ssl.SSLCertVerificationError, match="match|mismatch"):
            handshake(port, certs / "ca.crt", "instancetype-webhook.other-namespace.svc")
        other = tmp_path / "other"
        generate(other)
        with pytest.raises(ssl.SSLCertVerificationError):
            handshake(port, other / "ca.crt", SVC_DNS)

    import base64
    assert base64.b64decode(printed) == (certs / "ca.crt").read_bytes()
    leaf = x509.load_pem_x509_certificate((certs / "tls.crt").read_bytes())
    assert (leaf.public_key().key_size == 3072) if key_args else leaf.public_key().curve.name == "secp256r1"


def test_server_honours_the_minimum_tls_version(tmp_path):
    certs = tmp_path / "certs"
    generate(certs)
    with serve(certs, tmp_path, "--tls-min-version", "1.3") as port:
        assert handshake(port, certs / "ca.crt", SVC_DNS)["version"] == "TLSv1.3"
        ctx = ssl.create_default_context(cafile=str(certs / "ca.crt"))
        ctx.maximum_version = ssl.TLSVersion.TLSv1_2
        with socket.create_connection(("127.0.0.1", port), timeout=5) as raw, pytest.raises(ssl.SSLError):
            ctx.wrap_socket(raw, server_hostname=SVC_DNS)


def _match_condition() -> str:
    config = yaml.safe_load((ROOT / "webhook_config" / "mutatingwebhookconfiguration.yaml").read_text())
    (condition,) = config["webhooks"][0]["matchConditions"]
    return condition["expression"]


SHAPE = {"namespace": "vms", "run_strategy": "Always",
         "domain": {"cpu": {"cores": 2}, "memory": {"guest": "1Gi"}, "devices": {}}}
SKIPPED = [
    ("CREATE", build_vm("plain", **SHAPE), None),
    ("CREATE", build_vm("labelled", **SHAPE, annotations={"team": "a"}, labels={"x": "y"}), None),
    ("UPDATE", build_vm("plain", **SHAPE), build_vm("plain", **SHAPE)),
    ("UPDATE", build_vm("plain", **{**SHAPE, "run_strategy": "Halted"}),
     build_vm("plain", **SHAPE, status={"printableStatus": "Running"})),
]


@pytest.mark.parametrize("policy", ["reference", "expand", "expandAll"])
def test_reviews_the_match_condition_skips_get_the_answer_skipping_gives(tmp_path, policy):
    expression = _match_condition()
    for operation, vm, old in SKIPPED:
        assert match_condition_sends(expression, operation, vm, old) is False
    certs = tmp_path / "certs"
    generate(certs)
    with serve(certs, tmp_path, "--policy", policy) as port, client(certs) as http:
        for operation, vm, old in SKIPPED:
            for path in ("/mutate", "/validate"):
                body = review(vm, operation, old)
                answer = post(http, port, path, body)
                assert answer.status_code == 200, answer.text
                response = answer.json()["response"]
                assert response["uid"] == body["request"]["uid"]
                assert response["allowed"] is True, json.dumps(response)
                assert not response.get("patch") and not response.get("warnings"), json.dumps(response)
