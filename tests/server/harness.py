"""Start the real `instancetype-webhook serve` (uvicorn, real TLS) on 127.0.0.1 in a subprocess."""
from __future__ import annotations

import os
import socket
import ssl
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from instancetype_webhook.certs import generate, write_bundle
from tests.leaks import stop_process

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


def review(obj: dict[str, Any] | None, operation: str = "CREATE", old: dict[str, Any] | None = None,
           group: str = "kubevirt.io", kind: str = "VirtualMachine", version: str = "v1", **extra: Any) -> dict:
    meta = (obj or old or {}).get("metadata") or {}
    request: dict[str, Any] = {
        "uid": str(uuid.uuid4()), "kind": {"group": group, "version": version, "kind": kind},
        "resource": {"group": group, "version": version, "resource": kind.lower() + "s"},
        "operation": operation, "namespace": meta.get("namespace", ""), "name": meta.get("name", ""),
        "object": obj, "oldObject": old, "dryRun": False,
        "userInfo": {"username": "test"},
    }
    request.update(extra)
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


@contextmanager
def serve(tmp: Path, *args: str, env: dict[str, str] | None = None, certs: Certs | None = None,
          ready_timeout: float = 30, client_cert: tuple[Path, Path] | None = None) -> Iterator[Server]:
    certs = certs or make_certs(tmp / "certs")
    port, metrics_port = free_port(), free_port()
    log = tmp / f"server-{port}.log"
    cmd = [sys.executable, "-m", "instancetype_webhook", "serve", "--host", "127.0.0.1", "--port", str(port),
           "--metrics-port", str(metrics_port), "--tls-cert", str(certs.cert), "--tls-key", str(certs.key),
           "--shutdown-delay", "0", *args]
    full_env = {**os.environ, **(env or {})}
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, env=full_env)
    server = Server(f"https://127.0.0.1:{port}", f"http://127.0.0.1:{metrics_port}", certs, proc, log, client_cert)
    try:
        _wait_ready(server, ready_timeout)
        yield server
    finally:
        stop_process(proc)


def _wait_ready(server: Server, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    ctx = server.certs.client_context(server.client_cert)
    while time.monotonic() < deadline:
        if server.proc.poll() is not None:
            raise RuntimeError(f"server exited with {server.proc.returncode}:\n{server.logs()}")
        try:
            if httpx.get(server.url + "/healthz", verify=ctx, timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"server not up after {timeout}s:\n{server.logs()}")


def add_catalog(fake: Any) -> None:
    """Every object of the bundled catalogue into the fake API server (`tests.sources.fake_apiserver`)."""
    import yaml

    from instancetype_webhook.catalog import CATALOG_DIR

    for bundle in sorted(CATALOG_DIR.glob("*.yaml")):
        for obj in yaml.safe_load_all(bundle.read_text()):
            if obj:
                fake.add(obj)


@contextmanager
def webhook_for(fake: Any, tmp: Path, *args: str) -> Iterator[Server]:
    """`serve --kubeconfig` against the fake API server, ready (its cache synced), and registered as the fake's
    mutating and validating webhooks, as a real API server calls them."""
    with serve(tmp, "--kubeconfig", fake.kubeconfig_file(tmp), *args) as server, server.client() as client:
        deadline = time.monotonic() + 15
        while client.get("/readyz").status_code != 200 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert client.get("/readyz").status_code == 200, server.logs()
        fake.admission(server.url + "/mutate", server.url + "/validate", ca=str(server.certs.ca))
        yield server

