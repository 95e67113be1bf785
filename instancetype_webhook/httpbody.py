"""The request body of an ASGI request, read under a cap: the one body reader of the server's reviews, its
/preview and the playground's API (a Starlette `Request` gives its `scope` and `receive`)."""
from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]


class BodyTooLarge(Exception):
    """The body is (or says it is) larger than the cap: answered 413 at once."""


class ClientGone(Exception):
    """The client disconnected before sending the whole body."""


def declared_length(headers: Iterable[tuple[bytes, bytes]]) -> int | None:
    for name, value in headers:
        if name == b"content-length" and value.isdigit():
            return int(value)
    return None


async def read_body(scope: Message, receive: Receive, cap: int) -> bytes:
    """The whole body; BodyTooLarge as soon as it passes `cap` (declared or read so far), ClientGone when the
    client leaves first."""
    declared = declared_length(scope.get("headers") or ())
    if declared is not None and declared > cap:
        raise BodyTooLarge
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientGone
        chunk = message.get("body", b"")
        if chunk:
            size += len(chunk)
            if size > cap:
                raise BodyTooLarge
            chunks.append(chunk)
        if not message.get("more_body", False):
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)
