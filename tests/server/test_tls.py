"""TLS of the real server: certificate rotation under load, client certificates, minimum version."""
from __future__ import annotations

import datetime as dt
import os
import ssl
import threading
import time
from pathlib import Path

import httpx
import orjson
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from instancetype_webhook.certs import generate, write_bundle
from tests.kit.builders import review
from tests.kit.server import Certs, make_certs, serve
from tests.kit.tls import served_cert, trusting

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"}}


def test_certificate_rotation_under_load_drops_nothing(tmp_path: Path):
    first = make_certs(tmp_path / "a")
    second = generate(["localhost", "127.0.0.1"])
    second_ca = write_bundle(second, tmp_path / "b", overwrite=True)["ca.crt"]
    both = trusting(first.ca, second_ca)
    with serve(tmp_path, certs=first, env={"INSTANCETYPE_WEBHOOK_TLS_RELOAD_INTERVAL": "0.2"}) as server:
        before = served_cert(server.url, both)
        failures: list[str] = []
        done = threading.Event()
        counts = {"keepalive": 0, "fresh": 0}

        def keepalive() -> None:  # one connection opened before the rotation, kept throughout
            with httpx.Client(base_url=server.url, verify=both, timeout=10) as c:
                while not done.is_set():
                    try:
                        r = c.post("/validate", content=orjson.dumps(review(POD, group="", kind="Pod")))
                        if r.status_code != 200 or not r.json()["response"]["allowed"]:
                            failures.append(f"keepalive {r.status_code}")
                        counts["keepalive"] += 1
                    except httpx.HTTPError as exc:
                        failures.append(f"keepalive {exc!r}")

        def fresh() -> None:  # a new connection (new handshake) for every request
            while not done.is_set():
                try:
                    r = httpx.post(server.url + "/validate", verify=both, timeout=10,
                                   content=orjson.dumps(review(POD, group="", kind="Pod")))
                    if r.status_code != 200:
                        failures.append(f"fresh {r.status_code}")
                    counts["fresh"] += 1
                except httpx.HTTPError as exc:
                    failures.append(f"fresh {exc!r}")

        threads = [threading.Thread(target=keepalive), threading.Thread(target=fresh)]
        for t in threads:
            t.start()
        time.sleep(0.5)
        # Replace the files in place the way cert-manager/kubelet do (key first, then the cert: for a
        # moment the pair does not match, which the server must not serve).
        write_bundle(second, first.ca.parent, overwrite=True)
        deadline = time.monotonic() + 10
        after = before
        while after == before and time.monotonic() < deadline:
            time.sleep(0.2)
            after = served_cert(server.url, both)
        time.sleep(0.5)
        done.set()
        for t in threads:
            t.join(15)
        assert after == x509.load_pem_x509_certificate(second.cert_pem).public_bytes(serialization.Encoding.DER), \
            "the server never switched to the new certificate"
        assert not failures, failures[:5]
        assert counts["keepalive"] > 5 and counts["fresh"] > 5
        metrics = httpx.get(server.metrics_url + "/metrics", timeout=5).text
        assert "instancetype_webhook_tls_reloads_total 1.0" in metrics


def _client_cert(directory: Path) -> tuple[Path, tuple[Path, Path]]:
    """A client CA and a client certificate (clientAuth) signed by it."""
    now = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=5)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "test client CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now).not_valid_after(now + dt.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .sign(ca_key, hashes.SHA256()))
    leaf = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "apiserver")]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now).not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "ca.crt").write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    (directory / "client.crt").write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    (directory / "client.key").write_bytes(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    return directory / "ca.crt", (directory / "client.crt", directory / "client.key")


def test_client_certificate_verification(tmp_path: Path):
    client_ca, pair = _client_cert(tmp_path / "client")
    _, stranger = _client_cert(tmp_path / "stranger")
    certs = make_certs(tmp_path / "server")
    with serve(tmp_path, "--tls-client-ca", str(client_ca), certs=certs, client_cert=pair) as server:
        body = orjson.dumps(review(POD, group="", kind="Pod"))
        ok = httpx.post(server.url + "/validate", content=body, verify=certs.client_context(pair), timeout=5)
        assert ok.status_code == 200 and ok.json()["response"]["allowed"]
        for ctx in (certs.client_context(), certs.client_context(stranger)):
            with pytest.raises((httpx.HTTPError, ssl.SSLError)):
                httpx.post(server.url + "/validate", content=body, verify=ctx, timeout=5)


def test_tls_minimum_version(tmp_path: Path):
    certs: Certs = make_certs(tmp_path / "c")
    tls12 = certs.client_context()
    tls12.maximum_version = ssl.TLSVersion.TLSv1_2
    with serve(tmp_path, certs=certs) as server:  # default: 1.2 accepted
        assert httpx.get(server.url + "/healthz", verify=tls12, timeout=5).status_code == 200
    with serve(tmp_path, "--tls-min-version", "1.3", certs=certs) as server:
        with pytest.raises(httpx.HTTPError):
            httpx.get(server.url + "/healthz", verify=tls12, timeout=5)
        assert httpx.get(server.url + "/healthz", verify=certs.client_context(), timeout=5).status_code == 200


def test_a_reload_is_counted_once_per_new_pair_never_for_the_same_files(tmp_path):
    from instancetype_webhook.server.tls import ReloadingTLS

    certs = make_certs(tmp_path)
    tls = ReloadingTLS(certs.cert, certs.key)
    certs.cert.write_bytes(certs.cert.read_bytes())  # touched: new stamps, the same pair
    os.utime(certs.cert, ns=(time.time_ns() + 10**9, time.time_ns() + 10**9))
    assert tls.check() is False and tls.reloads == 0
    make_certs(tmp_path)  # a new pair in place
    os.utime(certs.cert, ns=(time.time_ns() + 2 * 10**9, time.time_ns() + 2 * 10**9))
    assert tls.check() is True and tls.reloads == 1
    assert tls.check() is False and tls.reloads == 1
