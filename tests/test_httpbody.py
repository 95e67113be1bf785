"""The request body read under a cap (httpbody.py) from a hand-written ASGI receive: the whole body in one or
many messages, BodyTooLarge when declared or read past the cap, ClientGone when the client leaves first."""
from __future__ import annotations

import asyncio

import pytest

from instancetype_webhook.httpbody import BodyTooLarge, ClientGone, declared_length, read_body


def receiving(*messages: dict):
    """An ASGI `receive` that answers these messages in order (and fails the test when asked for more)."""
    queue = list(messages)
    asked = []

    async def receive():
        asked.append(len(asked))
        assert queue, "read_body asked for a message after the last one"
        return queue.pop(0)

    receive.asked = asked
    return receive


def chunk(body: bytes, more: bool = False) -> dict:
    return {"type": "http.request", "body": body, "more_body": more}


def scope(length: int | str | None = None) -> dict:
    headers = [(b"content-type", b"application/json")]
    if length is not None:
        headers.append((b"content-length", str(length).encode()))
    return {"type": "http", "headers": headers}


def read(scope_: dict, receive, cap: int = 10) -> bytes:
    return asyncio.run(read_body(scope_, receive, cap))


def test_one_message_is_the_body():
    assert read(scope(5), receiving(chunk(b"hello"))) == b"hello"


def test_many_messages_are_joined_in_order():
    receive = receiving(chunk(b"ab", True), chunk(b"", True), chunk(b"cd", True), chunk(b"e"))
    assert read(scope(), receive) == b"abcde"
    assert len(receive.asked) == 4


def test_an_empty_body_and_a_message_without_body():
    assert read(scope(0), receiving(chunk(b""))) == b""
    assert read(scope(), receiving({"type": "http.request"})) == b""


def test_a_body_of_exactly_the_cap_is_read():
    assert read(scope(10), receiving(chunk(b"12345", True), chunk(b"67890")), cap=10) == b"1234567890"


def test_a_declared_length_over_the_cap_is_refused_before_reading():
    receive = receiving()
    with pytest.raises(BodyTooLarge):
        read(scope(11), receive, cap=10)
    assert receive.asked == []


def test_a_body_that_passes_the_cap_while_read_is_refused_at_once():
    receive = receiving(chunk(b"123456", True), chunk(b"78901", True), chunk(b"never asked"))
    with pytest.raises(BodyTooLarge):
        read(scope(), receive, cap=10)  # no content-length: chunked
    assert len(receive.asked) == 2


def test_a_body_longer_than_it_declared_is_still_capped():
    with pytest.raises(BodyTooLarge):
        read(scope(3), receiving(chunk(b"01234567890")), cap=10)


def test_a_client_that_leaves_first_is_gone():
    with pytest.raises(ClientGone):
        read(scope(8), receiving(chunk(b"half", True), {"type": "http.disconnect"}))
    with pytest.raises(ClientGone):
        read(scope(), receiving({"type": "http.disconnect"}))


def test_declared_length_reads_a_content_length_of_digits_only():
    assert declared_length([(b"host", b"x"), (b"content-length", b"42")]) == 42
    assert declared_length([(b"host", b"x")]) is None
    assert declared_length([(b"content-length", b"-1")]) is None
    assert declared_length([(b"content-length", b"4 2")]) is None
    assert declared_length([]) is None


def test_a_length_that_is_not_a_number_is_ignored_and_the_cap_still_holds():
    assert read(scope("lots"), receiving(chunk(b"ok"))) == b"ok"
    with pytest.raises(BodyTooLarge):
        read(scope("lots"), receiving(chunk(b"x" * 11)), cap=10)


def test_a_scope_without_headers():
    assert read({"type": "http"}, receiving(chunk(b"body"))) == b"body"
