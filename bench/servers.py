"""Start, wait for and stop the server processes a benchmark drives, on loopback.

Each server is a child process of the harness, optionally pinned to a set of CPUs so that the
load generator and the server do not fight over one core more than they must. Readiness is
polled over HTTP(S) and timed from just before the process is spawned.
"""
from __future__ import annotations

import os
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

HOST = "127.0.0.1"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def _insecure_context() -> ssl.SSLContext:
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


def http_get_status(url: str, timeout: float = 1.0) -> int | None:
    """The HTTP status of GET `url` (certificate not checked), or None if nothing answers."""
    try:
        with urllib.request.urlopen(url, timeout=timeout, context=_insecure_context()) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code
    except (OSError, ValueError):
        return None


@dataclass
class Server:
    """A server process started from `argv`, reachable at `base_url`."""

    name: str
    argv: list[str]
    base_url: str
    ready_path: str = "/readyz"
    cpus: set[int] | None = None
    env: dict[str, str] = field(default_factory=dict)
    log_path: Path | None = None
    cwd: Path | None = None  # where it runs (`python -m`/`-c` put this first on sys.path: not the repository, to
    # run the installed package of another environment, e.g. the compiled build)
    process: subprocess.Popen | None = None
    started_at: float = 0.0
    ready_s: float | None = None
    _log: IO[bytes] | None = None

    def start(self) -> Server:
        cpus = self.cpus
        self._log = open(self.log_path, "wb") if self.log_path else subprocess.DEVNULL  # noqa: SIM115  (closed in stop())
        self.started_at = time.monotonic()
        self.process = subprocess.Popen(
            self.argv, stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            env={**os.environ, **self.env}, cwd=self.cwd,
            preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None,
        )
        return self

    def wait_ready(self, timeout: float = 30.0) -> float:
        """Seconds from spawn to the first 200 on the ready path; raises if it dies or times out."""
        deadline = self.started_at + timeout
        while time.monotonic() < deadline:
            if self.process is None or self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.process and self.process.returncode}"
                                   f" before it was ready (log: {self.log_path})")
            if http_get_status(self.base_url + self.ready_path, timeout=0.5) == 200:
                self.ready_s = time.monotonic() - self.started_at
                return self.ready_s
            time.sleep(0.01)
        raise RuntimeError(f"{self.name} not ready after {timeout:.0f} s (log: {self.log_path})")

    def stop(self, timeout: float = 10.0) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self._log not in (None, subprocess.DEVNULL):
            self._log.close()  # type: ignore[union-attr]  # a file here: None and DEVNULL are excluded

    def rss_bytes(self) -> int:
        """Resident memory of the process and all its descendants."""
        assert self.process is not None
        return sum(_rss(pid) for pid in _process_tree(self.process.pid))

    def cpu_seconds(self) -> float:
        """User + system CPU time used so far by the process and all its descendants."""
        assert self.process is not None
        return sum(_cpu_seconds(pid) for pid in _process_tree(self.process.pid))

    def __enter__(self) -> Server:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _rss(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


def _process_tree(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    tree, todo = [], [root]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo.extend(children.get(pid, []))
    return tree
