"""`serve --workers N`: N processes answering on one port, each a complete webhook.

Why processes: one review is CPU-bound Python (the GIL), so one process uses one core. Each worker
is exactly the single-process server (its own event loop, TLS context with its own certificate
reload, reference source with its own watch caches, drain on SIGTERM); nothing is shared at run
time, so nothing needs a lock or a cross-process cache.

How they share the port: each worker binds `host:port` itself with `SO_REUSEPORT`, and the kernel
spreads new connections over the listening workers (by a hash of the connection's addresses). No
accept() thundering herd, and a worker that stops leaves the group without closing the others'
listeners. The API server keeps connections alive, so one connection stays on one worker.

The supervisor (the process `serve` started, PID 1 in the pod) is single-threaded and never
answers reviews:
- it checks what can fail once (TLS files; `--dev` makes one certificate all workers use), then
  forks the workers before it has any thread;
- with `--metrics-port` it serves /metrics itself: the workers' own /metrics (each on a loopback port
  of its own) fetched and added up per series (gauges of the configuration in use and the
  cache size: the largest; ready, synced and the certificate's notAfter: the smallest);
- SIGTERM/SIGINT are passed to every worker, each drains as one server does (/readyz false, then
  the listener closes, in-flight reviews finish); the supervisor exits when all have;
- a worker that dies is started again; one that exits with an error status within its first seconds
  (bad settings) stops the whole server with that status instead of restarting in a loop.
"""
from __future__ import annotations

import contextlib
import ctypes
import http.server
import logging
import os
import select
import signal
import socket
import time
import urllib.request
from collections.abc import Callable, Iterable
from typing import Any

from prometheus_client import CollectorRegistry
from prometheus_client.exposition import MetricsHandler
from prometheus_client.metrics_core import Metric
from prometheus_client.parser import text_string_to_metric_families

log = logging.getLogger("instancetype_webhook.server")

EARLY_EXIT_SECONDS = 5.0  # a worker failing this soon after its start is a configuration error
RESTART_DELAY = 1.0
MAX_GAUGES = frozenset({"instancetype_webhook_cluster_configuration_generation",
                        "instancetype_webhook_cluster_configuration_info",
                        "instancetype_webhook_reference_cache_objects",
                        "instancetype_webhook_reference_cache_out_of_sync_seconds",
                        "instancetype_webhook_tls_certificate_info"})
# the pod is only as ready (and its certificate only as fresh) as its worst worker
MIN_GAUGES = frozenset({"instancetype_webhook_ready", "instancetype_webhook_reference_cache_synced",
                        "instancetype_webhook_tls_certificate_not_after_timestamp_seconds"})


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def listen_socket(host: str, port: int) -> socket.socket:
    """A socket bound to host:port in the SO_REUSEPORT group (uvicorn listens on it)."""
    info = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
    sock = socket.socket(info[0], socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind(info[4])
    return sock


def _die_with_parent() -> None:
    """Linux: SIGTERM this worker when the supervisor dies (PR_SET_PDEATHSIG), so none is left behind."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG


# ---- /metrics of all workers ----------------------------------------------------------------------

def merge_metrics(texts: Iterable[str]) -> list[Metric]:
    """The workers' Prometheus texts as one set of families: each series added up across workers
    (the configuration gauges: the largest value); `_created` timestamps are left out."""
    families: dict[str, Metric] = {}
    values: dict[str, dict[tuple[str, tuple[tuple[str, str], ...]], float]] = {}
    for text in texts:
        for family in text_string_to_metric_families(text):
            families.setdefault(family.name, Metric(family.name, family.documentation, family.type))
            series = values.setdefault(family.name, {})
            for sample in family.samples:
                if sample.name.endswith("_created"):
                    continue
                key = (sample.name, tuple(sorted(sample.labels.items())))
                if family.name in MAX_GAUGES:
                    series[key] = max(series.get(key, sample.value), sample.value)
                elif family.name in MIN_GAUGES:
                    series[key] = min(series.get(key, sample.value), sample.value)
                else:
                    series[key] = series.get(key, 0.0) + sample.value
    out = []
    for name, family in families.items():
        for (sample_name, labels), value in values[name].items():
            family.add_sample(sample_name, dict(labels), value)
        out.append(family)
    return out


class WorkersCollector:
    """Reads every worker's /metrics at scrape time (a worker that does not answer is skipped)."""

    def __init__(self, ports: Callable[[], list[int]], timeout: float = 2.0):
        self.ports, self.timeout = ports, timeout

    def collect(self) -> list[Metric]:
        texts = []
        for port in self.ports():
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=self.timeout) as resp:
                    texts.append(resp.read().decode())
            except OSError:
                continue
        return merge_metrics(texts)


def metrics_server(host: str, port: int, collector: WorkersCollector) -> http.server.HTTPServer:
    """A single-threaded /metrics server: the supervisor polls it from its own loop (no threads, so
    forking a replacement worker stays safe)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    server = http.server.HTTPServer((host or "0.0.0.0", port), MetricsHandler.factory(registry))
    server.timeout = 0
    return server


# ---- supervisor -----------------------------------------------------------------------------------

class Supervisor:
    """Forks and watches the workers (see the module docstring). `run_worker(index, metrics_port)`
    runs one complete server in the child and returns its exit status."""

    def __init__(self, count: int, run_worker: Callable[[int, int], int], metrics_host: str = "",
                 metrics_port: int = 0):
        self.count, self.run_worker = count, run_worker
        self.metrics_host, self.metrics_port = metrics_host, metrics_port
        self.worker_ports = [free_port() if metrics_port else 0 for _ in range(count)]
        self.pids: dict[int, tuple[int, float]] = {}  # pid -> (index, started)
        self.stopping = 0  # signals received
        self.status = 0

    def start(self, index: int) -> None:
        pid = os.fork()
        if pid == 0:  # the worker
            code = 1
            try:
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                os.setpgid(0, 0)  # a terminal's Ctrl-C reaches the supervisor only, which passes it on once
                _die_with_parent()
                code = self.run_worker(index, self.worker_ports[index])
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
            except BaseException:  # noqa: BLE001 - report and leave, never return into the supervisor
                log.exception("worker %d failed", index)
            finally:
                logging.shutdown()
                os._exit(code)
        self.pids[pid] = (index, time.monotonic())

    def _signal(self, sig: int, _frame: Any) -> None:
        self.stopping += 1
        for pid in list(self.pids):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)

    def _reap(self) -> list[int]:
        """Indexes of workers that exited and should be started again."""
        again = []
        while self.pids:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                self.pids.clear()
                break
            if pid == 0:
                break
            index, started = self.pids.pop(pid, (None, 0.0))
            if index is None:
                continue
            code = os.waitstatus_to_exitcode(status)
            if self.stopping:
                self.status = self.status or (code if code > 0 else 0)
                continue
            if code > 0 and time.monotonic() - started < EARLY_EXIT_SECONDS:  # an error status, not a signal
                log.error("worker %d exited with status %d at start: stopping", index, code)
                self.status = code if code > 0 else 1
                self._signal(signal.SIGTERM, None)
                continue
            log.warning("worker %d (pid %d) exited with status %d: starting it again", index, pid, code)
            again.append(index)
        return again

    def run(self) -> int:
        for index in range(self.count):
            self.start(index)
        server = None
        if self.metrics_port:
            collector = WorkersCollector(lambda: self.worker_ports)
            server = metrics_server(self.metrics_host, self.metrics_port, collector)
        signal.signal(signal.SIGTERM, self._signal)
        signal.signal(signal.SIGINT, self._signal)
        log.info("supervising %d workers (pids %s)", self.count, " ".join(str(p) for p in self.pids))
        restart_at: dict[int, float] = {}
        try:
            while self.pids or (restart_at and not self.stopping):
                ready: list[Any] = []
                with contextlib.suppress(InterruptedError):
                    ready = select.select([server] if server else [], [], [], 0.2)[0]
                if ready and server is not None:
                    server.handle_request()  # its timeout is 0: answers the request select() found
                for index in self._reap():
                    restart_at[index] = time.monotonic() + RESTART_DELAY
                for index, when in list(restart_at.items()):
                    if self.stopping:
                        restart_at.clear()
                    elif time.monotonic() >= when:
                        del restart_at[index]
                        self.start(index)
        finally:
            if server is not None:
                server.server_close()
        return self.status
