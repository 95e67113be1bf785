"""A throw-away loopback certificate for the TLS rows, made with the project's own generator."""
from __future__ import annotations

from pathlib import Path

from targets import Tls

from instancetype_webhook.certs import self_signed


def write_self_signed(directory: Path) -> Tls:
    cert_pem, key_pem = self_signed()
    tls = Tls(directory / "tls.crt", directory / "tls.key")
    tls.cert.write_bytes(cert_pem)
    tls.key.write_bytes(key_pem)
    tls.key.chmod(0o600)
    return tls
