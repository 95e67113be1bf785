"""Each HTTP response in one write: uvicorn's httptools protocol with its transport wrapped.

uvicorn writes a response in two `transport.write` calls (the status line and headers, then the body); over
TLS each is its own record, `send()` and wake-up of the client. `CoalescingWrites` joins the writes made in
one event-loop step and hands them to the transport once, at the end of that step: nothing waits past the
current step, order is kept, `close()` flushes first and `abort()` drops. The protocol is uvicorn's own,
given its transport through asyncio's `Protocol.connection_made` and chosen with uvicorn's public
`Config(http=...)` option; nothing else of uvicorn is touched. Without httptools (or if uvicorn moves the
class) the server says so at start and runs uvicorn's default protocol.
"""
from __future__ import annotations

import asyncio
import logging
from typing import Any

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


def coalescing_protocol() -> type[asyncio.Protocol] | None:
    """uvicorn's httptools protocol writing each response in one piece; None (and a warning) without it."""
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    except ImportError as exc:
        log.warning("responses are written in two pieces: uvicorn's httptools protocol is not there (%s)", exc)
        return None

    class CoalescingHttpToolsProtocol(HttpToolsProtocol):
        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(CoalescingWrites(transport, asyncio.get_running_loop()))  # type: ignore[arg-type]

    return CoalescingHttpToolsProtocol
