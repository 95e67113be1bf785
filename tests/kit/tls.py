"""TLS from the client's side: a context trusting some CA files, and the certificate a server presents."""
from __future__ import annotations

import socket
import ssl
from pathlib import Path


def trusting(*cafiles: Path) -> ssl.SSLContext:
    """A client context trusting exactly these CA bundles (PEM files)."""
    ctx = ssl.create_default_context()
    ctx.load_verify_locations(cadata="".join(p.read_text() for p in cafiles))
    return ctx


def served_cert(url: str, ctx: ssl.SSLContext) -> bytes:
    """The DER certificate the server at `url` (https://HOST:PORT) presents in a handshake with `ctx`."""
    host, port = url.removeprefix("https://").split(":")
    with socket.create_connection((host, int(port)), timeout=3) as sock, \
            ctx.wrap_socket(sock, server_hostname=host) as tls:
        der = tls.getpeercert(binary_form=True)
    return der
