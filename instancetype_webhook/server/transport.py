"""uvicorn's HTTP protocol with each response written to the socket once, not twice.

uvicorn writes a response in two `transport.write` calls: the status line and headers when the app
sends `http.response.start`, then the body. Over TLS each write is its own TLS record, its own
`send()` system call and its own wake-up of the client (the API server). For a small admission
answer those two writes cost about a quarter of the server's CPU per request on loopback.

`CoalescingWrites` sits between the protocol and the transport: writes made in the same event-loop
step are joined and handed to the transport once, at the end of that step (`loop.call_soon`), so
headers and body leave as one TLS record. Nothing is delayed past the current step, ordering is
kept, and `close()`/`abort()` behave as before (close flushes first, abort drops). Everything
else (flow control, extra info, `is_closing`) is the real transport's.

`ReviewHttpToolsProtocol` also answers an admission review straight from the parser's callbacks: for a
POST to /mutate or /validate the body is gathered as it arrives (a body past the cap, declared or read, is
answered 413 at once and the rest only read, as on the ASGI path), and the answer (`review_now`, the same
function and bytes as the ASGI path) is written when the message is complete, with no ASGI scope, cycle,
task, event or message dicts in between: uvicorn's per-request machinery cost about a third of a
/validate review's CPU time. Everything else, and a review it cannot answer that way (Expect:
100-continue, a request pipelined behind one still being answered, a percent-encoded path, a root path,
a concurrency limit, a paused write side), goes through uvicorn's ASGI cycle as before. A review whose
handler needs a live lookup is answered from a task (`review_later`, a worker thread under the
deadline); requests pipelined behind it wait in uvicorn's own queue, so answers keep their order.
Keep-alive, `Connection: close`, HTTP/1.0, graceful shutdown and the keep-alive timeout behave as
uvicorn's own cycle does (`_DirectCycle` stands in for it while a review is open).
"""
from __future__ import annotations

import asyncio
import logging
from typing import Any

import httptools
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from instancetype_webhook.server.asgi import AdmissionApp, Deferred, Handler, Webhook, review_later, review_now

log = logging.getLogger("instancetype_webhook.server")


class CoalescingWrites:
    """A write-coalescing view of an asyncio transport (see the module docstring)."""

    __slots__ = ("transport", "_loop", "_pending")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop):
        self.transport = transport
        self._loop = loop
        self._pending: list[bytes] | None = None

    def write(self, data: bytes) -> None:
        if self._pending is None:
            self._pending = [data]
            self._loop.call_soon(self.flush)
        else:
            self._pending.append(data)

    def writelines(self, lines: Any) -> None:
        for data in lines:
            self.write(data)

    def flush(self) -> None:
        pending, self._pending = self._pending, None
        if pending and not self.transport.is_closing():
            self.transport.write(pending[0] if len(pending) == 1 else b"".join(pending))

    def close(self) -> None:
        self.flush()
        self.transport.close()

    def abort(self) -> None:
        self._pending = None
        self.transport.abort()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.transport, name)


class CoalescingHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol writing each response in one piece."""

    # uvicorn narrows the argument to asyncio.Transport (and ignores the override error itself)
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        # a duck-typed wrapper: the protocol only calls the Transport methods CoalescingWrites forwards
        super().connection_made(CoalescingWrites(transport, asyncio.get_running_loop()))  # type: ignore[arg-type]


class _NoEvent:
    """What uvicorn's connection_lost sets on the open cycle: nothing waits on a direct review."""

    def set(self) -> None:
        pass


class _DirectCycle:
    """Stands in for uvicorn's RequestResponseCycle while a review is answered directly: uvicorn's own
    code reads and writes these (pipelining, connection_lost, shutdown)."""

    __slots__ = ("keep_alive", "disconnected", "response_complete", "message_event")

    def __init__(self, keep_alive: bool):
        self.keep_alive = keep_alive
        self.disconnected = False
        self.response_complete = False
        self.message_event = _NoEvent()


class _DirectReview:
    """A review being received: its route, body so far, and the cycle it answers on. `chunks` is None once
    the body passed the cap: it was answered 413 then, and the rest of the message is only read."""

    __slots__ = ("endpoint", "handler", "cycle", "chunks", "size", "cap")

    def __init__(self, endpoint: str, handler: Handler, cycle: _DirectCycle, cap: int):
        self.endpoint, self.handler, self.cycle, self.cap = endpoint, handler, cycle, cap
        self.chunks: list[bytes] | None = []
        self.size = 0

    def add(self, chunk: bytes) -> bool:
        """Keep `chunk`; False when it takes the body past the cap (nothing more is kept)."""
        chunks = self.chunks
        if chunks is None:
            return True
        self.size += len(chunk)
        if self.size > self.cap:
            self.chunks = None
            return False
        chunks.append(chunk)
        return True

    def body(self) -> bytes:
        chunks = self.chunks or []
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)


_JSON_HEADERS = b"content-type: application/json\r\ncontent-length: "
_TEXT_HEADERS = b"content-type: text/plain; charset=utf-8\r\ncontent-length: "


class ReviewHttpToolsProtocol(CoalescingHttpToolsProtocol):
    """uvicorn's httptools protocol answering admission reviews directly (see the module docstring)."""

    _direct: _DirectReview | None = None
    _routes: dict[bytes, tuple[str, Handler]] = {}  # none: every request takes uvicorn's ASGI cycle
    _hook: Webhook | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]  # as above
        super().connection_made(transport)
        app = self.app  # uvicorn's loaded app: ours, unless wrapped (e.g. by its trace-level message logger)
        if isinstance(app, AdmissionApp) and not self.root_path:
            self._routes, self._hook = app.direct, app.hook

    def on_headers_complete(self) -> None:
        direct = self._open_direct() if self._routes else None
        self._direct = direct
        if direct is None:
            super().on_headers_complete()

    def _open_direct(self) -> _DirectReview | None:
        """A direct review for this request, or None when uvicorn's ASGI cycle must take it."""
        parser = self.parser
        if parser.get_method() != b"POST" or parser.should_upgrade() or self.expect_100_continue:
            return None
        cycle = self.cycle
        if (cycle is not None and not cycle.response_complete) or self.flow.write_paused:
            return None  # pipelined behind an open answer, or the client is not reading: uvicorn queues it
        if self.limit_concurrency is not None:
            return None
        route = self._routes.get(httptools.parse_url(self.url).path)
        if route is None:
            return None
        hook = self._hook
        assert hook is not None  # set with the routes (connection_made)
        http_version = parser.get_http_version()
        keep_alive = http_version != "1.0" and parser.should_keep_alive()
        self.cycle = direct_cycle = _DirectCycle(keep_alive)  # type: ignore[assignment]  # read by uvicorn's code
        direct = _DirectReview(route[0], route[1], direct_cycle, hook.max_body_bytes)
        for name, value in self.headers:
            if name == b"content-length" and value.isdigit() and int(value) > direct.cap:
                direct.chunks = None  # refused before the body is sent, as the ASGI path does
                self._review(direct, None)
                break
        return direct

    def on_body(self, body: bytes) -> None:
        direct = self._direct
        if direct is None:
            super().on_body(body)
        elif not direct.add(body):
            self._review(direct, None)  # past the cap: 413 now; the rest of the message is only read

    def on_message_complete(self) -> None:
        direct = self._direct
        if direct is None:
            super().on_message_complete()
            return
        self._direct = None
        if direct.chunks is not None:  # else answered when it passed the cap
            self._review(direct, direct.body())

    def _review(self, direct: _DirectReview, body: bytes | None) -> None:
        """Answer a direct review (`body` None: larger than the cap), now or from a worker thread."""
        hook = self._hook
        assert hook is not None  # a direct review is opened only with a hook (_open_direct)
        try:
            now = review_now(body, hook, direct.endpoint, direct.handler)
        except Exception:
            self._failed(direct.cycle)
            return
        if isinstance(now, Deferred):
            task = self.loop.create_task(self._answer_later(hook, direct, now))
            task.add_done_callback(self.tasks.discard)
            self.tasks.add(task)
        else:
            self._answer(direct.cycle, now[0], now[1])

    async def _answer_later(self, hook: Webhook, direct: _DirectReview, deferred: Deferred) -> None:
        try:
            status, body = await review_later(deferred, hook, direct.endpoint, direct.handler)
        except Exception:
            self._failed(direct.cycle)
            return
        self._answer(direct.cycle, status, body)

    def _failed(self, cycle: _DirectCycle) -> None:
        """As uvicorn answers an app that raised: logged, 500, connection closed."""
        log.exception("exception while answering a review")
        self._answer(cycle, 500, b"Internal Server Error", _TEXT_HEADERS, close=True)

    def _answer(self, cycle: _DirectCycle, status: int, body: bytes, headers: bytes = _JSON_HEADERS,
                close: bool = False) -> None:
        """Write the answer as uvicorn's cycle would (its default headers first), then finish the request
        as it does: close without keep-alive, else the next pipelined request or the keep-alive timer."""
        if cycle.disconnected:
            return
        if close:
            cycle.keep_alive = False
        parts = [STATUS_LINE[status]]
        for name, value in self.server_state.default_headers:
            parts += [name, b": ", value, b"\r\n"]
        parts += [headers, b"%d" % len(body), b"\r\n"]
        if not cycle.keep_alive:
            parts.append(b"connection: close\r\n")
        parts += [b"\r\n", body]
        self.transport.write(b"".join(parts))
        cycle.response_complete = True
        if not cycle.keep_alive:
            self.transport.close()
        self.on_response_complete()
