"""Security of the running server: TLS floor, no plain-HTTP admission endpoint, client certificates
(expired ones refused), and logs that never contain the object (a secret planted in cloud-init user
data, annotations and labels goes through every path: patched, denied, 400, 413, preview, deadline).

(Client certificates from another CA and the 1.3 minimum are tested in tests/server/test_tls.py; the
non-root, read-only container and read-only RBAC in tests/ship.)
"""
from __future__ import annotations

import datetime as dt
import socket
import ssl
import subprocess
import sys
from pathlib import Path

import httpx
import orjson
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from tests.kit.fault_strategies import base_vm, review
from tests.kit.server import ROOT, Server, make_certs, serve

SECRET = "hunter2-S3CR3T-4f9c2a"


def _handshake(server: Server, version: ssl.TLSVersion) -> str:
    """The negotiated version, or the error text, for a client that offers only `version`."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(str(server.certs.ca))
    ctx.set_ciphers("ALL:@SECLEVEL=0")  # let the client offer old protocols: the refusal is the server's
    ctx.minimum_version = ctx.maximum_version = version
    host, port = server.url.removeprefix("https://").split(":")
    try:
        with socket.create_connection((host, int(port)), timeout=5) as raw, \
                ctx.wrap_socket(raw, server_hostname=host) as tls:
            return str(tls.version())
    except (ssl.SSLError, OSError) as exc:
        return f"refused: {exc}"


@pytest.mark.filterwarnings("ignore:ssl.TLSVersion:DeprecationWarning")
def test_tls_floor_is_1_2(expand_server: Server):
    assert _handshake(expand_server, ssl.TLSVersion.TLSv1_2) == "TLSv1.2"
    assert _handshake(expand_server, ssl.TLSVersion.TLSv1_3) == "TLSv1.3"
    for old in (ssl.TLSVersion.TLSv1, ssl.TLSVersion.TLSv1_1):
        result = _handshake(expand_server, old)
        assert result.startswith("refused"), result
        assert "NO_PROTOCOLS_AVAILABLE" not in result, "the client could not even offer it: test is void"


def test_no_plain_http_admission_endpoint(expand_server: Server):
    host, port = expand_server.url.removeprefix("https://").split(":")
    body = orjson.dumps(review(base_vm()))
    with socket.create_connection((host, int(port)), timeout=5) as raw:
        raw.sendall(b"POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
        try:
            reply = raw.recv(4096)
        except ConnectionError:
            reply = b""
    assert not reply.startswith(b"HTTP/"), reply[:100]
    for path in ("/mutate", "/validate", "/preview"):  # the plain-HTTP metrics port serves only metrics
        resp = httpx.post(expand_server.metrics_url + path, content=body, timeout=5)
        assert resp.status_code != 200 or b'"AdmissionReview"' not in resp.content, path


def test_serving_without_tls_is_refused(tmp_path: Path):
    proc = subprocess.run([sys.executable, "-m", "instancetype_webhook", "serve", "--port", "0", "--metrics-port", "0"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert proc.returncode == 2 and "TLS is required" in proc.stderr, proc.stderr


def _client_pair(directory: Path, expired: bool) -> tuple[Path, tuple[Path, Path]]:
    now = dt.datetime.now(dt.UTC)
    start, end = (now - dt.timedelta(days=3), now - dt.timedelta(days=1)) if expired else \
        (now - dt.timedelta(minutes=5), now + dt.timedelta(days=1))
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "reliability client CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(days=5))
          .not_valid_after(now + dt.timedelta(days=5))
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True).sign(ca_key, hashes.SHA256()))
    leaf = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "apiserver")]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(start).not_valid_after(end)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    directory.mkdir(parents=True)
    (directory / "ca.crt").write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    (directory / "c.crt").write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    (directory / "c.key").write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                        serialization.NoEncryption()))
    return directory / "ca.crt", (directory / "c.crt", directory / "c.key")


def test_client_certificates_required_and_checked(tmp_path: Path):
    ca, good = _client_pair(tmp_path / "good", expired=False)
    ca_of_expired, expired = _client_pair(tmp_path / "expired", expired=True)
    bundle = tmp_path / "client-cas.pem"
    bundle.write_bytes(ca.read_bytes() + ca_of_expired.read_bytes())
    certs = make_certs(tmp_path / "server")
    body = orjson.dumps(review(base_vm()))
    with serve(tmp_path, "--tls-client-ca", str(bundle), certs=certs, client_cert=good) as server:
        ok = httpx.post(server.url + "/validate", content=body, verify=certs.client_context(good), timeout=5)
        assert ok.status_code == 200 and ok.json()["response"]["allowed"]
        for pair in (None, expired):
            with pytest.raises((httpx.HTTPError, ssl.SSLError)):
                httpx.post(server.url + "/validate", content=body, verify=certs.client_context(pair), timeout=5)


def _secret_vm(name: str = "secret-vm") -> dict:
    vm = base_vm(name, user_data=f"#cloud-config\npassword: {SECRET}\nchpasswd: {{ expire: False }}\n")
    vm["metadata"]["annotations"] = {"example.com/token": SECRET}
    vm["spec"]["template"]["metadata"]["labels"]["leak"] = SECRET
    return vm


def test_logs_never_contain_the_object(tmp_path: Path):
    """Every kind of answer, at debug log level: the log has identifiers, never the secret."""
    patched, conflict, missing, broken = _secret_vm(), _secret_vm(), _secret_vm(), _secret_vm()
    patched["spec"]["instancetype"] = {"name": "u1.medium"}
    conflict["spec"]["instancetype"] = {"name": "u1.medium"}
    conflict["spec"]["template"]["spec"]["domain"]["cpu"] = {"sockets": 3}
    missing["spec"]["instancetype"] = {"name": "nope-" + SECRET[:6]}
    broken["spec"]["template"]["spec"]["domain"]["memory"] = {"guest": SECRET}
    broken["spec"]["instancetype"] = {"name": "u1.medium"}
    with serve(tmp_path, "--policy", "expand", "--log-level", "debug") as server, server.client() as client:
        answers = []
        for vm in (patched, conflict, missing, broken):
            for path in ("/mutate", "/validate"):
                answers.append(client.post(path, content=orjson.dumps(review(vm))).status_code)
            answers.append(client.post("/preview", content=orjson.dumps(vm)).status_code)
        bad = review(patched)
        bad["request"]["operation"] = "PATCH"  # 400, with the object in the body
        answers.append(client.post("/mutate", content=orjson.dumps(bad)).status_code)
        answers.append(client.post("/mutate", content=orjson.dumps(bad)[:-7]).status_code)  # invalid JSON
        answers.append(client.post("/mutate", content=orjson.dumps(bad) + b"x" * (9 * 2**20)).status_code)
        logs = server.logs()
    assert answers.count(200) == 12 and sorted(set(answers) - {200}) == [400, 413], answers
    assert logs.count('"msg":"review"') >= 8 + 3, logs[-2000:]
    assert "secret-vm" in logs  # identifiers are logged ...
    assert SECRET not in logs and SECRET[:12] not in logs  # ... the object never is
    assert "cloud-config" not in logs
