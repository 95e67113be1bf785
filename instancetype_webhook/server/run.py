"""Start the webhook: reference source, TLS, metrics, uvicorn, and a drain on SIGTERM."""
from __future__ import annotations

import asyncio
import functools
import gc
import logging
import socket
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import uvicorn

from instancetype_webhook.assembly import Assembly, AssemblyError, assemble
from instancetype_webhook.compiled import build_summary
from instancetype_webhook.server.app import Webhook, create_app
from instancetype_webhook.server.logconfig import configure
from instancetype_webhook.server.metrics import Metrics, State
from instancetype_webhook.server.tls import ReloadingTLS, TLSError, dev_certificate
from instancetype_webhook.settings import ServerSettings

log = logging.getLogger("instancetype_webhook.server")


class ServeError(RuntimeError):
    """The server cannot start with these settings."""


class DrainingServer(uvicorn.Server):
    """On SIGTERM/SIGINT: /readyz turns false first, the listener closes `delay` seconds later, and
    in-flight requests are drained (uvicorn's graceful shutdown). A second signal exits at once."""

    def __init__(self, config: uvicorn.Config, hook: Webhook, delay: float):
        super().__init__(config)
        self.hook, self.delay = hook, delay

    async def shutdown(self, sockets: Any = None) -> None:
        # An idle keep-alive TLS connection closes with a close_notify exchange the client may never
        # answer (it is not reading); abort those so shutdown does not wait for the TLS timeout.
        task = asyncio.ensure_future(self._abort_idle())
        try:
            await super().shutdown(sockets)
        finally:
            task.cancel()

    async def _abort_idle(self) -> None:
        await asyncio.sleep(0.2)
        while True:
            for conn in list(self.server_state.connections):
                cycle = getattr(conn, "cycle", None)
                transport = getattr(conn, "transport", None)
                if transport is not None and (cycle is None or cycle.response_complete):
                    transport.abort()
            await asyncio.sleep(0.2)

    def handle_exit(self, sig: int, frame: Any) -> None:
        if self.hook.draining or self.delay <= 0:
            self.hook.draining = True
            return super().handle_exit(sig, frame)
        self.hook.draining = True
        log.info("draining: /readyz is false, stopping in %.1fs", self.delay)
        timer = threading.Timer(self.delay, functools.partial(uvicorn.Server.handle_exit, self, sig, frame))
        timer.daemon = True
        timer.start()


def cache_objects(source: Any) -> dict[str, int]:
    """Objects per resource in the reference cache (the watched kinds; offline: the catalogue's kinds)."""
    informers = getattr(source, "informers", None)
    if informers is not None:
        return {informer.name: len(informer.store) for informer in list(informers.values())}
    counts: dict[str, int] = {}
    for obj in getattr(source, "objects", list)():
        resource = str(obj.get("kind") or "").lower() + "s"  # the plural, as the watched kinds are named
        counts[resource] = counts.get(resource, 0) + 1
    return counts


def tls_files(settings: ServerSettings) -> tuple[Path, Path]:
    if settings.dev:
        if settings.tls_cert or settings.tls_key:
            raise ServeError("--dev makes its own certificate; do not pass --tls-cert/--tls-key with it")
        return dev_certificate(Path(tempfile.mkdtemp(prefix="instancetype-webhook-dev-")))
    if not (settings.tls_cert and settings.tls_key):
        raise ServeError("TLS is required: pass --tls-cert and --tls-key, or --dev for a throw-away certificate")
    return settings.tls_cert, settings.tls_key


def bind_listener(host: str, port: int, flag: str = "--port") -> socket.socket:
    """The HTTPS socket, bound before anything says the server is serving: a taken port or an address this machine
    does not have is a ServeError (one line), never uvicorn's exit after the "serving" line."""
    try:
        info = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
        sock = socket.socket(info[0], socket.SOCK_STREAM)
    except OSError as exc:
        raise ServeError(f"cannot listen on {host}:{port}: {reason(exc)}") from exc
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(info[4])
    except OSError as exc:
        sock.close()
        raise ServeError(f"cannot listen on {host}:{port}: {reason(exc)}"
                         f"{f' (another server is on this port; {flag} picks another)' if is_busy(exc) else ''}") \
            from exc
    return sock


def metrics_host(settings: ServerSettings) -> str:
    """Where /metrics listens: --metrics-host, else the serving host (`--host 127.0.0.1` keeps both local)."""
    return settings.metrics_host or settings.host


def reason(exc: OSError) -> str:
    return exc.strerror.lower() if exc.strerror else str(exc)


def is_busy(exc: OSError) -> bool:
    import errno

    return exc.errno == errno.EADDRINUSE


def transport_options() -> dict[str, Any]:
    """uvicorn's fastest stack here, through its public options: uvloop and httptools when installed (`auto`),
    each response written once (server.coalesce), and no proxy-headers middleware (the webhook never reads the
    client address or scheme)."""
    from instancetype_webhook.server.coalesce import coalescing_protocol

    return {"proxy_headers": False, "loop": "auto", "http": coalescing_protocol() or "auto"}


def webhook(settings: ServerSettings, assembly: Assembly) -> Webhook:
    """The server state for `settings` over an assembled source: its limits, deadline and start grace, its
    readiness and the /readyz details (the cluster configuration, the reference cache, the source's name:
    which common-instancetypes bundle, offline without --catalog).
    The metrics follow the cluster configuration."""
    metrics = Metrics()
    assembly.configuration.subscribe(metrics.configuration)
    return Webhook(ctx=assembly.ctx, metrics=metrics, max_body_bytes=settings.max_body_bytes,
                   max_json_depth=settings.max_json_depth, deadline=settings.review_deadline,
                   deadline_action=settings.deadline_action, offload=assembly.offload, ready=assembly.ready,
                   start_grace=settings.start_grace, configuration_status=assembly.configuration.describe,
                   cache_status=getattr(assembly.source, "cache_status", None),
                   reference_source=assembly.source_name())


def serve(settings: ServerSettings, playground: Any = None, on_listening: Callable[[int], None] | None = None) -> int:
    """Run the server; `playground` (playground.routes.Playground) mounts /playground, as --dev does
    with the bundled samples. `on_listening(port)` runs once the port is bound (a line for the user)."""
    configure(settings.log_level, settings.log_allowed)
    if playground is None and settings.dev:
        from instancetype_webhook.playground.routes import Playground, bundled_samples

        playground = Playground(bundled_samples())
    cert, key = tls_files(settings)
    try:
        tls = ReloadingTLS(cert, key, settings.tls_client_ca, settings.tls_min_version, settings.tls_reload_interval)
    except TLSError as exc:
        raise ServeError(str(exc)) from exc
    if settings.workers > 1:
        return serve_workers(settings, cert, key, playground)
    return serve_one(settings, cert, key, tls, playground=playground, on_listening=on_listening)


def serve_workers(settings: ServerSettings, cert: Path, key: Path, playground: Any = None) -> int:
    """--workers N: a supervisor and N complete servers on one port (instancetype_webhook.server.workers)."""
    from instancetype_webhook.server.workers import Supervisor, free_port, listen_socket

    port = settings.port or free_port(settings.host or "127.0.0.1")
    try:
        listen_socket(settings.host, port).close()  # fail here, once, if the port is taken
    except OSError as exc:
        raise ServeError(f"cannot listen on {settings.host}:{port}: {reason(exc)}") from exc
    if settings.metrics_port:  # the supervisor's /metrics, likewise
        bind_listener(metrics_host(settings), settings.metrics_port, "--metrics-port").close()
    if settings.dev:
        log.info("dev certificate %s (all %d workers)", cert, settings.workers)

    def worker(index: int, metrics_port: int) -> int:
        mine = settings.model_copy(update={"workers": 1, "dev": False, "tls_cert": cert, "tls_key": key,
                                           "port": port, "metrics_port": metrics_port, "metrics_host": "127.0.0.1"})
        try:
            tls = ReloadingTLS(cert, key, mine.tls_client_ca, mine.tls_min_version, mine.tls_reload_interval)
            return serve_one(mine, cert, key, tls, sockets=[listen_socket(settings.host, port)], worker=index,
                             playground=playground)
        except (ServeError, TLSError, OSError) as exc:  # as `serve` reports them, then the supervisor stops
            print(f"serve: worker {index}: {exc}", file=sys.stderr, flush=True)
            return 2

    gc.freeze()  # what is loaded now is shared with the workers: keep the collector off those pages
    return Supervisor(settings.workers, worker, metrics_host(settings), settings.metrics_port).run()


def serve_one(settings: ServerSettings, cert: Path, key: Path, tls: ReloadingTLS,
              sockets: list[Any] | None = None, worker: int | None = None, playground: Any = None,
              on_listening: Callable[[int], None] | None = None) -> int:
    """One complete server: source, TLS reload, metrics, uvicorn, drain (listening on `sockets` if given, else on a
    socket bound here first: a port that cannot be had is a ServeError before anything is logged)."""
    if sockets is None:
        sockets = [bind_listener(settings.host, settings.port)]
    port = sockets[0].getsockname()[1]  # --port 0: the port the system chose
    try:
        assembly = assemble(settings, objects=playground.objects if playground is not None else ())
    except AssemblyError as exc:
        for sock in sockets:
            sock.close()
        raise ServeError(str(exc)) from exc
    source, ctx = assembly.source, assembly.ctx
    hook = webhook(settings, assembly)
    metrics = hook.metrics
    tls.on_reload = metrics.tls_reloads.inc
    metrics.state(State(ready=hook.is_ready, synced=lambda: bool(getattr(source, "synced", True)),
                        cache_objects=functools.partial(cache_objects, source),
                        certificate_not_after=lambda: tls.not_after,
                        out_of_sync=getattr(source, "out_of_sync", dict), certificate=lambda: tls.info))
    if settings.metrics_port:
        try:
            metrics.serve(settings.metrics_port, metrics_host(settings))
        except OSError as exc:
            for sock in sockets:
                sock.close()
            assembly.stop()
            raise ServeError(f"cannot serve /metrics on {metrics_host(settings)}:{settings.metrics_port}: "
                             f"{reason(exc)} (--metrics-port picks another, 0 turns it off)") from exc
    tls.start()
    config = uvicorn.Config(
        create_app(hook, playground, assembly.where), host=settings.host, port=settings.port,
        ssl_context_factory=tls.context_factory,
        access_log=False, log_config=None, log_level=settings.log_level, lifespan="off",
        # uvicorn declares an int but waits with asyncio.timeout(), so fractional seconds work
        timeout_graceful_shutdown=settings.shutdown_grace,  # type: ignore[arg-type]
        server_header=False, **transport_options(),
    )
    log.info("serving https://%s:%d (policy %s, %s, TLS >= %s, %s%s%s%s)", settings.host, port,
             settings.policy, assembly.where, settings.tls_min_version, build_summary(),
             ", client certificates required" if settings.tls_client_ca else "",
             f", dev certificate {cert}" if settings.dev else "", f", worker {worker}" if worker is not None else "")
    release = ctx.cluster.release
    log.log(logging.WARNING if release.assumed else logging.INFO, "answering as %s (from %s)", release.describe(),
            release.source or "default")
    if playground is not None and worker in (None, 0):
        log.info("playground https://%s:%d/playground", settings.host, port)
    if on_listening is not None:
        on_listening(port)
    try:
        DrainingServer(config, hook, settings.shutdown_delay).run(sockets=sockets)
    finally:
        tls.stop()
        assembly.stop()
    return 0
