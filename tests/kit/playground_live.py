"""Start the real `serve --dev` or `playground` process on 127.0.0.1 (a random free port) for the tests."""
from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from tests.kit.server import free_port, launch


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
    url = f"https://127.0.0.1:{port}"

    def ready() -> bool:
        return httpx.get(url + "/readyz", verify=False, timeout=1).status_code == 200

    with launch(tmp, args, ready, env=env, timeout=ready_timeout, name="live") as (proc, log):
        yield Live(url, proc, log)


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
