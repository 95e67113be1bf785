"""server.coalesce: writes of one event-loop step reach the transport once, in order; close flushes, abort drops;
the server runs uvicorn's httptools protocol so wrapped."""
from __future__ import annotations

import asyncio

from instancetype_webhook.server.coalesce import CoalescingWrites, coalescing_protocol


class FakeTransport:
    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = self.aborted = False

    def write(self, data: bytes) -> None:
        assert not self.closed, "write after close"
        self.writes.append(data)

    def is_closing(self) -> bool:
        return self.closed or self.aborted

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.aborted = True

    def get_extra_info(self, name: str, default=None):
        return {"peername": ("127.0.0.1", 1)}.get(name, default)


def test_writes_of_one_step_are_joined():
    async def main() -> FakeTransport:
        real = FakeTransport()
        writes = CoalescingWrites(real, asyncio.get_running_loop())
        writes.write(b"HTTP/1.1 200 OK\r\n\r\n")
        writes.write(b"{}")
        assert real.writes == []  # nothing before the step ends
        await asyncio.sleep(0)
        writes.write(b"next")
        await asyncio.sleep(0)
        return real

    assert asyncio.run(main()).writes == [b"HTTP/1.1 200 OK\r\n\r\n{}", b"next"]


def test_close_flushes_first_and_abort_drops():
    async def main() -> tuple[FakeTransport, FakeTransport]:
        loop = asyncio.get_running_loop()
        a, b = FakeTransport(), FakeTransport()
        wa, wb = CoalescingWrites(a, loop), CoalescingWrites(b, loop)
        wa.write(b"last words")
        wa.close()
        wb.write(b"dropped")
        wb.abort()
        await asyncio.sleep(0)  # the scheduled flushes find nothing (or a closing transport)
        return a, b

    a, b = asyncio.run(main())
    assert a.writes == [b"last words"] and a.closed
    assert b.writes == [] and b.aborted


def test_everything_else_is_the_real_transport():
    async def main() -> None:
        writes = CoalescingWrites(FakeTransport(), asyncio.get_running_loop())
        assert writes.get_extra_info("peername") == ("127.0.0.1", 1)
        assert not writes.is_closing()

    asyncio.run(main())



def test_the_protocol_is_uvicorns_httptools_one_with_the_transport_wrapped():
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    protocol = coalescing_protocol()
    assert protocol is not None and issubclass(protocol, HttpToolsProtocol)
