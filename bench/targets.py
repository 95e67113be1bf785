"""What the harness starts and drives: the floor and our service, over plain HTTP and TLS.

Our service over TLS is the shipped command (`instancetype-webhook serve`, one worker, policy
`expand`, the bundled catalogue). The product has no plain-HTTP admission endpoint (by design), so
for the plain-HTTP rows `bench/plain_server.py` runs the same FastAPI app factory under uvicorn
without TLS. The floor runs under the same uvicorn options (uvloop, httptools, no access log).
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from servers import HOST, Server, free_port

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
PY = sys.executable
TRANSPORTS = ("plain", "tls")


@dataclass(frozen=True)
class Endpoint:
    """One row family of the table: a server and the path the review is POSTed to."""

    target: str  # floor | mutate | validate
    server: str  # floor | ours
    path: str
    want_patch: bool = False


ENDPOINTS = (
    Endpoint("floor", "floor", "/"),
    Endpoint("framework", "framework", "/mutate"),  # optional diagnostic row, see framework_app.py
    Endpoint("mutate", "ours", "/mutate", want_patch=True),
    Endpoint("validate", "ours", "/validate"),
)


@dataclass(frozen=True)
class Tls:
    cert: Path
    key: Path


def _url(transport: str, port: int) -> str:
    return f"{'https' if transport == 'tls' else 'http'}://{HOST}:{port}"


def _tls_args(transport: str, tls: Tls) -> list[str]:
    return ["--tls-cert", str(tls.cert), "--tls-key", str(tls.key)] if transport == "tls" else []


def floor_server(transport: str, tls: Tls, logs: Path, cpus: set[int] | None, kind: str = "floor") -> Server:
    """The floor (bench/floor_app.py) or, with kind `framework`, the same inside FastAPI."""
    port = free_port()
    script = BENCH / ("floor_app.py" if kind == "floor" else "framework_app.py")
    argv = [PY, str(script), "--host", HOST, "--port", str(port), *_tls_args(transport, tls)]
    return Server(f"{kind}-{transport}", argv, _url(transport, port), cpus=cpus,
                  log_path=logs / f"{kind}-{transport}.log")


def serve_argv(port: int, tls: Tls, catalog: Path | None = None) -> list[str]:
    """The shipped command line: one worker, policy expand, the bundled catalogue unless `catalog`."""
    argv = [PY, "-m", "instancetype_webhook", "serve", "--host", HOST, "--port", str(port), "--policy", "expand",
            "--tls-cert", str(tls.cert), "--tls-key", str(tls.key), "--metrics-port", str(free_port()),
            "--shutdown-delay", "0"]  # no drain pause when the harness stops it
    return argv + (["--catalog", str(catalog)] if catalog else [])


def ours_server(transport: str, tls: Tls, logs: Path, cpus: set[int] | None) -> Server:
    port = free_port()
    if transport == "tls":
        argv = serve_argv(port, tls)
    else:
        argv = [PY, str(BENCH / "plain_server.py"), "--host", HOST, "--port", str(port),
                "--metrics-port", str(free_port())]
    return Server(f"ours-{transport}", argv, _url(transport, port), cpus=cpus,
                  log_path=logs / f"ours-{transport}.log", env={"PYTHONPATH": str(ROOT)})


def build_server(kind: str, transport: str, tls: Tls, logs: Path, cpus: set[int] | None) -> Server:
    if kind == "ours":
        return ours_server(transport, tls, logs, cpus)
    return floor_server(transport, tls, logs, cpus, kind)
