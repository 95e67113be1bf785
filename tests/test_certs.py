"""instancetype_webhook/certs.py: the CA + serving certificate, the --dev self-signed certificate, file modes."""
from __future__ import annotations

import base64
import datetime as dt
import ipaddress
import os
import stat

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID

from instancetype_webhook import certs


def _sans(cert: x509.Certificate) -> tuple[list[str], list[str]]:
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    return san.get_values_for_type(x509.DNSName), [str(ip) for ip in san.get_values_for_type(x509.IPAddress)]


def test_service_hosts_lists_every_name_the_api_server_may_use():
    assert certs.service_hosts("itw", "kv") == [
        "itw", "itw.kv", "itw.kv.svc", "itw.kv.svc.cluster.local", "localhost", "127.0.0.1",
    ]
    assert certs.service_hosts("itw", "kv", "corp.example")[3] == "itw.kv.svc.corp.example"


@pytest.mark.parametrize("service,namespace",
                         [("Itw", "kv"), ("itw", "kv_1"), ("", "kv"), ("itw", "-kv"), ("a" * 64, "kv")])
def test_service_hosts_rejects_names_that_are_not_dns_labels(service, namespace):
    with pytest.raises(certs.CertError, match="DNS-1123"):
        certs.service_hosts(service, namespace)


def test_generate_ecdsa_bundle_is_a_ca_signing_a_server_certificate():
    now = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)
    bundle = certs.generate(certs.service_hosts("itw", "kv"), days=30, now=now)
    ca = x509.load_pem_x509_certificate(bundle.ca_cert_pem)
    leaf = x509.load_pem_x509_certificate(bundle.cert_pem)

    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca is True
    assert ca.extensions.get_extension_for_class(x509.KeyUsage).value.key_cert_sign is True
    assert leaf.extensions.get_extension_for_class(x509.BasicConstraints).value.ca is False
    assert ExtendedKeyUsageOID.SERVER_AUTH in leaf.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    leaf.verify_directly_issued_by(ca)  # raises if the signature or issuer does not match
    assert leaf.issuer == ca.subject

    dns, ips = _sans(leaf)
    assert dns == ["itw", "itw.kv", "itw.kv.svc", "itw.kv.svc.cluster.local", "localhost"]
    assert ips == ["127.0.0.1"]
    assert isinstance(leaf.public_key(), ec.EllipticCurvePublicKey)
    assert leaf.public_key().curve.name == "secp256r1"

    assert leaf.not_valid_before_utc < now < leaf.not_valid_after_utc
    assert leaf.not_valid_after_utc - now == dt.timedelta(days=30)

    key = serialization.load_pem_private_key(bundle.key_pem, password=None)
    assert key.public_key().public_numbers() == leaf.public_key().public_numbers()
    assert base64.b64decode(bundle.ca_bundle) == bundle.ca_cert_pem


@pytest.mark.parametrize("bits", [2048, 3072])
def test_generate_rsa_on_request(bits):
    bundle = certs.generate(["itw.kv.svc"], key_type="rsa", rsa_bits=bits)
    leaf = x509.load_pem_x509_certificate(bundle.cert_pem)
    assert isinstance(leaf.public_key(), rsa.RSAPublicKey)
    assert leaf.public_key().key_size == bits
    assert leaf.extensions.get_extension_for_class(x509.KeyUsage).value.key_encipherment is True


@pytest.mark.parametrize("kwargs,message", [
    ({"key_type": "dsa"}, "unknown key type"),
    ({"key_type": "rsa", "rsa_bits": 1024}, "RSA key size"),
    ({"days": 0}, "between 1 and 3650"),
    ({"days": 100000}, "between 1 and 3650"),
])
def test_generate_rejects_bad_options(kwargs, message):
    with pytest.raises(certs.CertError, match=message):
        certs.generate(["itw"], **kwargs)


def test_generate_needs_a_host():
    with pytest.raises(certs.CertError, match="at least one host"):
        certs.generate([])


def test_each_bundle_has_its_own_keys():
    a, b = certs.generate(["itw"]), certs.generate(["itw"])
    assert a.key_pem != b.key_pem and a.ca_cert_pem != b.ca_cert_pem


def test_self_signed_for_dev_covers_the_hosts_and_verifies_itself():
    cert_pem, key_pem = certs.self_signed(["localhost", "127.0.0.1", "::1"])
    cert = x509.load_pem_x509_certificate(cert_pem)
    cert.verify_directly_issued_by(cert)
    dns, ips = _sans(cert)
    assert dns == ["localhost"] and ips == ["127.0.0.1", "::1"]
    assert cert.not_valid_after_utc - cert.not_valid_before_utc <= dt.timedelta(days=1, minutes=5)
    key = serialization.load_pem_private_key(key_pem, password=None)
    assert key.public_key().public_numbers() == cert.public_key().public_numbers()


def test_self_signed_defaults_to_loopback():
    dns, ips = _sans(x509.load_pem_x509_certificate(certs.self_signed()[0]))
    assert dns == ["localhost"] and ips == ["127.0.0.1"]


def test_write_bundle_creates_private_dir_and_key(tmp_path):
    out = tmp_path / "new" / "certs"
    bundle = certs.generate(["itw"])
    paths = certs.write_bundle(bundle, out)
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(paths["tls.key"]).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(paths["tls.crt"]).st_mode) == 0o644
    assert paths["ca.crt"].read_bytes() == bundle.ca_cert_pem
    assert paths["tls.crt"].read_bytes() == bundle.cert_pem
    assert paths["tls.key"].read_bytes() == bundle.key_pem
    assert sorted(p.name for p in out.iterdir()) == ["ca.crt", "tls.crt", "tls.key"]  # no temp files left


def test_write_bundle_refuses_to_overwrite_unless_asked(tmp_path):
    first, second = certs.generate(["itw"]), certs.generate(["itw"])
    certs.write_bundle(first, tmp_path)
    with pytest.raises(certs.CertError, match="refusing to overwrite"):
        certs.write_bundle(second, tmp_path)
    assert (tmp_path / "tls.key").read_bytes() == first.key_pem
    os.chmod(tmp_path / "tls.key", 0o644)
    certs.write_bundle(second, tmp_path, overwrite=True)
    assert (tmp_path / "tls.key").read_bytes() == second.key_pem
    assert stat.S_IMODE(os.stat(tmp_path / "tls.key").st_mode) == 0o600


def test_write_bundle_into_a_file_is_an_error(tmp_path):
    target = tmp_path / "file"
    target.write_text("x")
    with pytest.raises(certs.CertError, match="not a directory"):
        certs.write_bundle(certs.generate(["itw"]), target)


def test_ip_sans_are_ip_addresses_not_dns_names():
    leaf = x509.load_pem_x509_certificate(certs.generate(["itw", "10.0.0.1", "fd00::1"]).cert_pem)
    dns, ips = _sans(leaf)
    assert dns == ["itw"]
    assert [ipaddress.ip_address(i) for i in ips] == [ipaddress.ip_address("10.0.0.1"), ipaddress.ip_address("fd00::1")]
