"""Start the real `serve --dev` or `playground` process on 127.0.0.1 (a random free port) for the tests."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from tests.leaks import stop_process
from tests.server.harness import free_port

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Live:
    url: str
    proc: subprocess.Popen
    log: Path

    def client(self, **kw: Any) -> httpx.Client:
        return httpx.Client(base_url=self.url, verify=False, timeout=20, **kw)  # the throw-away dev certificate

    def logs(self) -> str:
        return self.log.read_text()


def dev_args(port: int) -> list[str]:
    """`make serve`'s command, on `port` and without the metrics port."""
    return ["serve", "--dev", "--host", "127.0.0.1", "--port", str(port), "--allow-vm-policy",
            "--metrics-port", "0", "--shutdown-delay", "0"]


@contextmanager
def start(tmp: Path, args: list[str], port: int, env: dict[str, str] | None = None,
          ready_timeout: float = 30) -> Iterator[Live]:
    log = tmp / f"live-{port}.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "instancetype_webhook",
                                 *args], cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
                                env={**os.environ, **(env or {})})
    live = Live(f"https://127.0.0.1:{port}", proc, log)
    try:
        deadline = time.monotonic() + ready_timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"exited with {proc.returncode}:\n{live.logs()}")
            try:
                if httpx.get(live.url + "/readyz", verify=False, timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"not up after {ready_timeout}s:\n{live.logs()}")
            time.sleep(0.1)
        yield live
    finally:
        stop_process(proc)


@contextmanager
def serve_dev(tmp: Path, *extra: str, env: dict[str, str] | None = None) -> Iterator[Live]:
    port = free_port()
    with start(tmp, [*dev_args(port), *extra], port, env) as live:
        yield live


@contextmanager
def playground(tmp: Path, *extra: str, env: dict[str, str] | None = None) -> Iterator[Live]:
    port = free_port()
    with start(tmp, ["playground", "--port", str(port), *extra], port, env) as live:
        yield live
