"""TLS material for the webhook: a private CA plus a serving certificate for the Service's DNS names.

Pure apart from `write_bundle`: generation returns PEM bytes, so the CLI (`instancetype-webhook certs`)
and the server's `--dev` mode (`self_signed`) share one implementation.
"""
from __future__ import annotations

import base64
import datetime as dt
import ipaddress
import os
import re
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

KEY_TYPES = ("ecdsa", "rsa")
RSA_SIZES = (2048, 3072)
LOOPBACK_HOSTS = ("localhost", "127.0.0.1")
CLOCK_SKEW = dt.timedelta(minutes=5)  # not-before is back-dated so nodes with a slightly slow clock accept it
CA_FILE, CERT_FILE, KEY_FILE = "ca.crt", "tls.crt", "tls.key"

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")

PrivateKey = ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey


class CertError(ValueError):
    """Bad input for certificate generation (names, key type, validity)."""


@dataclass(frozen=True)
class ServingBundle:
    """A CA certificate and a serving certificate + key signed by it, all PEM."""

    ca_cert_pem: bytes
    cert_pem: bytes
    key_pem: bytes

    @property
    def ca_bundle(self) -> str:
        """The base64 `caBundle` value for a webhook configuration's clientConfig."""
        return ca_bundle(self.ca_cert_pem)


def ca_bundle(ca_cert_pem: bytes) -> str:
    return base64.b64encode(ca_cert_pem).decode("ascii")


def check_dns_label(value: str, what: str) -> str:
    if not _DNS_LABEL.match(value or ""):
        raise CertError(f"{what} {value!r} is not a DNS-1123 label (lower-case letters, digits and '-', at most 63)")
    return value


def service_hosts(service: str, namespace: str, cluster_domain: str = "cluster.local") -> list[str]:
    """The names the API server may use to reach `service` in `namespace`, plus loopback for local tests."""
    check_dns_label(service, "service name")
    check_dns_label(namespace, "namespace")
    svc = f"{service}.{namespace}.svc"
    return [service, f"{service}.{namespace}", svc, f"{svc}.{cluster_domain}", *LOOPBACK_HOSTS]


def new_key(key_type: str = "ecdsa", rsa_bits: int = 2048) -> PrivateKey:
    if key_type == "ecdsa":
        return ec.generate_private_key(ec.SECP256R1())
    if key_type == "rsa":
        if rsa_bits not in RSA_SIZES:
            raise CertError(f"RSA key size {rsa_bits} not offered; choose one of {', '.join(map(str, RSA_SIZES))}")
        return rsa.generate_private_key(public_exponent=65537, key_size=rsa_bits)
    raise CertError(f"unknown key type {key_type!r}; choose one of {', '.join(KEY_TYPES)}")


def _san(hosts: list[str]) -> x509.SubjectAlternativeName:
    names: list[x509.GeneralName] = []
    for host in dict.fromkeys(hosts):  # keep order, drop duplicates
        try:
            names.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            names.append(x509.DNSName(host))
    return x509.SubjectAlternativeName(names)


def _validity(days: int, now: dt.datetime | None) -> tuple[dt.datetime, dt.datetime]:
    if not isinstance(days, int) or days < 1 or days > 3650:
        raise CertError(f"validity must be between 1 and 3650 days, got {days!r}")
    start = (now or dt.datetime.now(dt.UTC)) - CLOCK_SKEW
    return start, start + CLOCK_SKEW + dt.timedelta(days=days)


def _key_usage(*, ca: bool, rsa_key: bool) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=True, content_commitment=False, key_encipherment=rsa_key and not ca,
        data_encipherment=False, key_agreement=False, key_cert_sign=ca, crl_sign=ca,
        encipher_only=False, decipher_only=False,
    )


def _builder(subject: x509.Name, issuer: x509.Name, public_key, days: int,
             now: dt.datetime | None) -> x509.CertificateBuilder:
    not_before, not_after = _validity(days, now)
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_after)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), critical=False)
    )


def _name(common_name: str) -> x509.Name:
    return x509.Name([
        x509.NameAttribute(NameOID.ORGANIZATION_NAME, "instancetype-webhook"),
        x509.NameAttribute(NameOID.COMMON_NAME, common_name[:64]),
    ])


def _pem_key(key: PrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _pem_cert(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def _sign(builder: x509.CertificateBuilder, key: PrivateKey) -> x509.Certificate:
    return builder.sign(key, hashes.SHA256())


def generate(hosts: list[str], *, days: int = 365, key_type: str = "ecdsa", rsa_bits: int = 2048,
             now: dt.datetime | None = None) -> ServingBundle:
    """A fresh CA and a serving certificate for `hosts` (DNS names or IP addresses; the first is the CN)."""
    if not hosts:
        raise CertError("at least one host name is needed for the serving certificate")
    ca_key, key = new_key(key_type, rsa_bits), new_key(key_type, rsa_bits)
    ca_name = _name(f"instancetype-webhook CA for {hosts[0]}")
    ca_cert = _sign(
        _builder(ca_name, ca_name, ca_key.public_key(), days, now)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(_key_usage(ca=True, rsa_key=key_type == "rsa"), critical=True),
        ca_key,
    )
    leaf = _sign(
        _builder(_name(hosts[0]), ca_name, key.public_key(), days, now)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_key_usage(ca=False, rsa_key=key_type == "rsa"), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(_san(hosts), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False),
        ca_key,
    )
    return ServingBundle(_pem_cert(ca_cert), _pem_cert(leaf), _pem_key(key))


BUNDLE_FILE = "ca-bundle.crt"


def load_ca_certificates(pem: bytes, where: str) -> list[x509.Certificate]:
    """The CA certificates of a PEM file (a caBundle may hold several); CertError when there is none, or one
    that is not a CA."""
    try:
        found = x509.load_pem_x509_certificates(pem)
    except ValueError as exc:
        raise CertError(f"{where}: no PEM certificate in it") from exc
    for cert in found:
        try:
            is_ca = cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
        except x509.ExtensionNotFound:
            is_ca = False
        if not is_ca:
            raise CertError(f"{where}: {cert.subject.rfc4514_string()} is not a CA certificate")
    return found


def rotation_bundle(old_ca_pem: bytes, new: ServingBundle, where: str = "the old CA file") -> bytes:
    """The caBundle of a CA rotation's overlap: the old CA certificate(s), then the new one (PEM)."""
    old = load_ca_certificates(old_ca_pem, where)
    new_ca = x509.load_pem_x509_certificate(new.ca_cert_pem)
    kept = [c for c in old if c.fingerprint(hashes.SHA256()) != new_ca.fingerprint(hashes.SHA256())]
    return b"".join(_pem_cert(c) for c in kept) + new.ca_cert_pem


def self_signed(hosts: list[str] | tuple[str, ...] = LOOPBACK_HOSTS, *, days: int = 1) -> tuple[bytes, bytes]:
    """(cert_pem, key_pem) of a throw-away self-signed ECDSA certificate for `hosts` (the server's `--dev`).

    The certificate is its own trust anchor, so it can also be passed to a client as the CA file.
    Stable API: the server depends on this signature.
    """
    hosts = list(hosts) or list(LOOPBACK_HOSTS)
    key = new_key("ecdsa")
    name = _name(hosts[0])
    cert = _sign(
        _builder(name, name, key.public_key(), days, None)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(
            digital_signature=True, content_commitment=False, key_encipherment=False, data_encipherment=False,
            key_agreement=False, key_cert_sign=True, crl_sign=False, encipher_only=False, decipher_only=False,
        ), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(_san(hosts), critical=False),
        key,
    )
    return _pem_cert(cert), _pem_key(key)


def _write(path: Path, data: bytes, mode: int) -> None:
    """Write atomically (temp file + rename) so a server reloading the files never reads half of one."""
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        os.fchmod(fd, mode)  # an existing temp file keeps its old mode otherwise
        os.write(fd, data)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def write_bundle(bundle: ServingBundle, out_dir: str | os.PathLike[str], *, overwrite: bool = False) -> dict[str, Path]:
    """Write ca.crt, tls.crt (0644) and tls.key (0600) into `out_dir` (created 0700 if missing)."""
    out = Path(out_dir)
    if not out.exists():
        out.mkdir(mode=0o700, parents=True)
        os.chmod(out, 0o700)  # mkdir's mode is filtered by the umask
    elif not out.is_dir():
        raise CertError(f"{out} exists and is not a directory")
    paths = {name: out / name for name in (CA_FILE, CERT_FILE, KEY_FILE)}
    existing = [str(p) for p in paths.values() if p.exists()]
    if existing and not overwrite:
        raise CertError(f"refusing to overwrite {', '.join(existing)} (pass --force to replace them)")
    _write(paths[KEY_FILE], bundle.key_pem, 0o600)
    _write(paths[CA_FILE], bundle.ca_cert_pem, 0o644)
    _write(paths[CERT_FILE], bundle.cert_pem, 0o644)
    return paths


def write_ca_bundle(pem: bytes, out_dir: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
    """Write ca-bundle.crt (0644) into `out_dir`, which write_bundle made."""
    path = Path(out_dir) / BUNDLE_FILE
    if path.exists() and not overwrite:
        raise CertError(f"refusing to overwrite {path} (pass --force to replace it)")
    _write(path, pem, 0o644)
    return path


def key_id(cert_pem: bytes) -> str:
    """The hex Subject Key Identifier of a certificate (for a CA: the authority key id of what it signs)."""
    cert = x509.load_pem_x509_certificate(cert_pem)
    try:
        return cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value.digest.hex()
    except x509.ExtensionNotFound:
        return x509.SubjectKeyIdentifier.from_public_key(cert.public_key()).digest.hex()
