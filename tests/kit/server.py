"""The real `instancetype-webhook serve` (uvicorn, real TLS) on 127.0.0.1, on free ports, in a subprocess.

- `serve(tmp, *args)`: generated certificates (or yours), ready when it answers (`/healthz`, or `ready_path`),
  its output in a log file under `tmp` (`Server.logs()`), stopped (SIGTERM, then SIGKILL) on leaving.
- `launch(tmp, args, probe)`: the process part alone, for a command or readiness check of another shape
  (`serve --dev`, `playground`, a probe that is a TLS handshake for another name).
- `free_port`, `make_certs`, `Certs`: the pieces, for tests that need them on their own.
"""
from __future__ import annotations

import os
import socket
import ssl
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from instancetype_webhook.certs import generate, write_bundle
from tests.kit.leaks import stop_process

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Certs:
    ca: Path
    cert: Path
    key: Path

    def client_context(self, cert: tuple[Path, Path] | None = None) -> ssl.SSLContext:
        ctx = ssl.create_default_context(cafile=str(self.ca))
        if cert:
            ctx.load_cert_chain(*cert)
        return ctx


def make_certs(directory: Path, hosts: tuple[str, ...] = ("localhost", "127.0.0.1")) -> Certs:
    paths = write_bundle(generate(list(hosts)), directory, overwrite=True)
    return Certs(paths["ca.crt"], paths["tls.crt"], paths["tls.key"])


@dataclass
class Server:
    url: str
    metrics_url: str
    certs: Certs
    proc: subprocess.Popen
    log: Path
    client_cert: tuple[Path, Path] | None = None

    def client(self, **kw: Any) -> httpx.Client:
        kw.setdefault("verify", self.certs.client_context(self.client_cert))
        return httpx.Client(base_url=self.url, timeout=10, **kw)

    def logs(self) -> str:
        return self.log.read_text()


@contextmanager
def launch(tmp: Path, args: list[str], probe: Callable[[], bool], *, env: dict[str, str] | None = None,
           timeout: float = 30, name: str = "server", program: list[str] | None = None, cwd: Path | None = None,
           inherit_env: bool = True) -> Iterator[tuple[subprocess.Popen, Path]]:
    """`python -m instancetype_webhook *args` (or `program *args`; cwd: the checkout, or `cwd`; `env` added to
    this process's, or the whole environment with `inherit_env=False`), output to `tmp/<name>-<id>.log`;
    yields `(process, log)` once `probe()` is true (an `OSError`/`httpx.HTTPError` from it counts as not yet).
    Fails with RuntimeError and the log when the process exits first or `timeout` passes; stops it afterwards."""
    log = tmp / f"{name}-{uuid.uuid4().hex[:8]}.log"
    command = program if program is not None else [sys.executable, "-m", "instancetype_webhook"]
    with open(log, "wb") as out:
        proc = subprocess.Popen([*command, *args], cwd=cwd or ROOT, stdout=out, stderr=subprocess.STDOUT,
                                env={**os.environ, **(env or {})} if inherit_env else dict(env or {}))
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"{name} exited with {proc.returncode}:\n{log.read_text()}")
            try:
                if probe():
                    break
            except (OSError, httpx.HTTPError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"{name} not up after {timeout}s:\n{log.read_text()}")
            time.sleep(0.1)
        yield proc, log
    finally:
        stop_process(proc)


@contextmanager
def serve(tmp: Path, *args: str, env: dict[str, str] | None = None, certs: Certs | None = None,
          ready_timeout: float = 30, client_cert: tuple[Path, Path] | None = None,
          ready_path: str = "/healthz") -> Iterator[Server]:
    """`serve` with TLS on 127.0.0.1 (free port and metrics port, no shutdown delay, `*args` added), once
    `ready_path` answers 200; `ready_path="/readyz"` also waits for its sources to be synced."""
    certs = certs or make_certs(tmp / "certs")
    port, metrics_port = free_port(), free_port()
    url = f"https://127.0.0.1:{port}"
    ctx = certs.client_context(client_cert)
    cmd = ["serve", "--host", "127.0.0.1", "--port", str(port), "--metrics-port", str(metrics_port),
           "--tls-cert", str(certs.cert), "--tls-key", str(certs.key), "--shutdown-delay", "0", *args]

    def ready() -> bool:
        return httpx.get(url + ready_path, verify=ctx, timeout=1).status_code == 200

    with launch(tmp, cmd, ready, env=env, timeout=ready_timeout) as (proc, log):
        yield Server(url, f"http://127.0.0.1:{metrics_port}", certs, proc, log, client_cert)
