"""TLS for the webhook: TLS 1.2 minimum (1.3 optional), optional client-certificate verification, and
certificate + key reloaded when their files change, with no restart and no dropped connections.

How the reload works: uvicorn listens with one fixed `SSLContext` (the "listener" context) whose
SNI callback runs on every handshake (with or without an SNI name) and moves the new connection onto
the *current* context. A watcher thread polls the files; when they change it builds a complete new
context from one consistent read of both files and swaps the reference only if that succeeded. A
half-written pair (cert updated, key not yet) fails to load and is retried on the next tick, so the
server never serves a broken pair. Established connections keep the context they started with.
"""
from __future__ import annotations

import logging
import os
import ssl
import tempfile
import threading
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes

from instancetype_webhook.certs import self_signed

log = logging.getLogger("instancetype_webhook.tls")

VERSIONS = {"1.2": ssl.TLSVersion.TLSv1_2, "1.3": ssl.TLSVersion.TLSv1_3}


class TLSError(ValueError):
    """Certificate files that cannot be loaded."""


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


class ReloadingTLS:
    """The server's TLS material, rebuilt whenever the cert or key file changes."""

    def __init__(self, cert: Path, key: Path, client_ca: Path | None = None, min_version: str = "1.2",
                 interval: float = 1.0):
        if min_version not in VERSIONS:
            raise TLSError(f"--tls-min-version must be 1.2 or 1.3, got {min_version!r}")
        self.cert, self.key, self.client_ca = Path(cert), Path(key), (Path(client_ca) if client_ca else None)
        self.min_version = VERSIONS[min_version]
        self.interval = interval
        self.reloads = 0
        self.on_reload = lambda: None
        self._stamps = self._current_stamps()
        self._pem = b""
        self._pair: tuple[bytes, bytes] = (b"", b"")  # the certificate and key in use, as read
        self.current = self._build()
        self.not_after = certificate_not_after(self._pem)  # of the certificate in use (Unix time)
        self.info = certificate_info(self._pem)
        self.listener = self._build()
        self.listener.sni_callback = self._select
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _current_stamps(self) -> tuple:
        return tuple(_stamp(p) for p in (self.cert, self.key, self.client_ca) if p is not None)

    def _build(self) -> ssl.SSLContext:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = self.min_version
        ctx.options |= ssl.OP_NO_COMPRESSION
        try:
            cert_pem, key_pem = self.cert.read_bytes(), self.key.read_bytes()
        except OSError as exc:
            raise TLSError(f"cannot read TLS files: {exc}") from exc
        self._pem, self._pair = cert_pem, (cert_pem, key_pem)
        # load_cert_chain only takes paths: load the bytes we read once, so cert and key are one pair.
        with tempfile.TemporaryDirectory(prefix="iw-tls-") as tmp:
            cert_tmp, key_tmp = Path(tmp, "tls.crt"), Path(tmp, "tls.key")
            cert_tmp.write_bytes(cert_pem)
            fd = os.open(key_tmp, os.O_WRONLY | os.O_CREAT, 0o600)
            with os.fdopen(fd, "wb") as fh:
                fh.write(key_pem)
            try:
                ctx.load_cert_chain(cert_tmp, key_tmp)
            except (ssl.SSLError, ValueError) as exc:
                raise TLSError(f"{self.cert} / {self.key}: not a matching PEM certificate and key: {exc}") from exc
        if self.client_ca is not None:
            try:
                ctx.load_verify_locations(cafile=str(self.client_ca))
            except (OSError, ssl.SSLError) as exc:
                raise TLSError(f"{self.client_ca}: cannot load client CA: {exc}") from exc
            ctx.verify_mode = ssl.CERT_REQUIRED
        return ctx

    def _select(self, sslobj, server_name, listener) -> None:  # noqa: ANN001 (ssl callback signature)
        current = self.current
        if sslobj.context is not current:
            sslobj.context = current

    def check(self) -> bool:
        """Reload if the files changed; True when a new context is now in use."""
        stamps = self._current_stamps()
        if stamps == self._stamps:
            return False
        in_use, pem = self._pair, self._pem
        try:
            ctx = self._build()
        except TLSError as exc:
            log.warning("TLS files changed but do not load yet (retrying): %s", exc)
            return False
        self._stamps = stamps
        if self._pair == in_use and self.client_ca is None:  # the same pair (touched, or read mid-write before)
            self._pem = pem
            return False
        self.current = ctx
        self.not_after = certificate_not_after(self._pem)
        self.info = certificate_info(self._pem)
        self.reloads += 1
        self.on_reload()
        log.info("TLS certificate reloaded from %s", self.cert)
        return True

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="tls-reload", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.check()

    def context_factory(self, _config, _default) -> ssl.SSLContext:  # noqa: ANN001 (uvicorn's signature)
        return self.listener


def certificate_not_after(pem: bytes) -> float | None:
    """notAfter (Unix time) of the first certificate in a PEM chain; None when it does not parse."""
    try:
        cert = x509.load_pem_x509_certificate(pem)
    except ValueError:
        return None
    return cert.not_valid_after_utc.timestamp()


def certificate_info(pem: bytes) -> dict[str, str]:
    """Who signed the serving certificate in use: its issuer, the issuer's key id (the authority key id;
    two CAs of the same name differ there) and the certificate's SHA-256 fingerprint. Empty when it does
    not parse."""
    try:
        cert = x509.load_pem_x509_certificate(pem)
    except ValueError:
        return {}
    try:
        issuer_key = cert.extensions.get_extension_for_class(x509.AuthorityKeyIdentifier).value.key_identifier
    except x509.ExtensionNotFound:
        issuer_key = None
    return {"issuer": cert.issuer.rfc4514_string(), "issuer_key_id": issuer_key.hex() if issuer_key else "",
            "fingerprint_sha256": cert.fingerprint(hashes.SHA256()).hex()}


def dev_certificate(directory: Path, hosts: tuple[str, ...] = ("localhost", "127.0.0.1", "::1")) -> tuple[Path, Path]:
    """A throw-away self-signed certificate for --dev, written to `directory` (key mode 0600)."""
    cert_pem, key_pem = self_signed(list(hosts))
    cert, key = directory / "tls.crt", directory / "tls.key"
    cert.write_bytes(cert_pem)
    fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(key_pem)
    return cert, key
