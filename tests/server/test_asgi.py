"""The one door of a review (server.asgi.AdmissionApp) under a real uvicorn server, with uvicorn's own protocol.

Pipelined answers keep their order (also behind a review that needs a worker thread); keep-alive,
`Connection: close`, HTTP/1.0, chunked bodies, the body cap, a client gone mid-body and a failing answer
behave as uvicorn's cycle makes them; every kind of review gets the same answer over the wire as from
`review_answer` in process.
"""
from __future__ import annotations

import asyncio
import re
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson
import pytest
import uvicorn

import instancetype_webhook.server.asgi as door
from instancetype_webhook.admission.context import ReviewContext, ReviewReply
from instancetype_webhook.server import reviewlog
from instancetype_webhook.server.app import Webhook, create_app
from instancetype_webhook.server.run import transport_options
from instancetype_webhook.sources.catalog import load_catalog
from tests.kit.live_source import LiveSource
from tests.kit.server import free_port

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@contextmanager
def running(hook: Webhook, routes: dict[str, Any] | None = None) -> Iterator[int]:
    """A real uvicorn server (uvloop, the webhook's protocol, plain HTTP) for `hook` on a free port;
    `routes` ({path: (endpoint, handler)}) replace the app's review routes."""
    port = free_port()
    options = transport_options()
    app = create_app(hook)
    if routes is not None:
        app.reviews = routes
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None, access_log=False,
                            lifespan="off", timeout_graceful_shutdown=5, **options)  # type: ignore[arg-type]
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="uvicorn-door")
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "server did not start"
        time.sleep(0.02)
    try:
        yield port
    finally:
        server.should_exit = True
        thread.join(15)


def request(path: str, body: bytes, *headers: str, version: str = "1.1") -> bytes:
    lines = [f"POST {path} HTTP/{version}", "host: webhook", "content-type: application/json",
             f"content-length: {len(body)}", *headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def read_response(sock: socket.socket, buffer: bytearray) -> bytes:
    """One whole response from `sock` (content-length framed); what follows stays in `buffer`."""
    while b"\r\n\r\n" not in buffer:
        chunk = sock.recv(65536)
        assert chunk, f"connection closed mid-response: {bytes(buffer)!r}"
        buffer += chunk
    head, _, _ = bytes(buffer).partition(b"\r\n\r\n")
    if head.startswith(b"HTTP/1.1 100 Continue"):
        del buffer[: len(head) + 4]
        return read_response(sock, buffer)
    length = int(re.search(rb"content-length: (\d+)", head).group(1))  # type: ignore[union-attr]
    end = len(head) + 4 + length
    while len(buffer) < end:
        chunk = sock.recv(65536)
        assert chunk, "connection closed mid-body"
        buffer += chunk
    response = bytes(buffer[:end])
    del buffer[:end]
    return response


def exchange(port: int, data: bytes, answers: int = 1) -> tuple[list[bytes], bool]:
    """Send `data`, read `answers` responses; also whether the server closed the connection afterwards."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(data)
        buffer = bytearray()
        responses = [read_response(sock, buffer) for _ in range(answers)]
        sock.settimeout(0.5)
        try:
            closed = sock.recv(1) == b""
        except TimeoutError:
            closed = False
    return responses, closed


@pytest.fixture
def hook() -> Webhook:
    return Webhook(ctx=ReviewContext(source=load_catalog(), policy="expand"), max_body_bytes=64 * 1024)


BODIES = {
    "mutate flattens": ("/mutate", (EXAMPLES / "vm-create-expand.json").read_bytes()),
    "validate denies": ("/validate", (EXAMPLES / "vm-conflict.json").read_bytes()),
    "validate allows": ("/validate", (EXAMPLES / "vm-create-reference.json").read_bytes()),
    "validate, a VM that is no review": ("/validate", (EXAMPLES / "vm.json").read_bytes()),
    "mutate, missing reference": ("/mutate", (EXAMPLES / "vm-missing-reference.json").read_bytes()),
    "with the API server's timeout": ("/mutate?timeout=10s", (EXAMPLES / "vm-create-expand.json").read_bytes()),
    "not JSON": ("/mutate", b"{not json"),
    "not a review": ("/validate", b"[1, 2]"),
    "over the cap": ("/mutate", b" " * (64 * 1024 + 1)),
}


@pytest.mark.parametrize("name", list(BODIES))
def test_the_answer_over_the_wire_is_review_answers(hook: Webhook, name: str):
    path, body = BODIES[name]
    endpoint, handler = door.REVIEWS[path.partition("?")[0]]

    async def read() -> bytes:
        if len(body) > hook.max_body_bytes:
            raise door.BodyTooLarge
        return body

    status, expected = asyncio.run(door.review_answer(read, hook, endpoint, handler))
    with running(hook) as port:
        [response], _ = exchange(port, request(path, body))
    head, _, answer = response.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 %d " % status) and b"content-type: application/json" in head
    assert answer == expected
    assert hook.metrics.in_flight == 0


def test_pipelined_requests_are_answered_in_order(hook: Webhook):
    review = (EXAMPLES / "vm-conflict.json").read_bytes()
    flatten = (EXAMPLES / "vm-create-expand.json").read_bytes()
    readyz = b"GET /readyz HTTP/1.1\r\nhost: webhook\r\n\r\n"
    with running(hook) as port:
        responses, closed = exchange(port, request("/validate", review) + readyz + request("/mutate", flatten), 3)
    bodies = [r.partition(b"\r\n\r\n")[2] for r in responses]
    assert b'"allowed":false' in bodies[0] and b"000000000003" in bodies[0]
    assert orjson.loads(bodies[1])["status"] == "ready"
    assert b'"patchType":"JSONPatch"' in bodies[2] and b"000000000001" in bodies[2]
    assert not closed  # keep-alive


@pytest.mark.parametrize(("version", "headers"), [("1.0", ()), ("1.1", ("connection: close",))])
def test_a_connection_without_keep_alive_is_closed_after_the_answer(hook: Webhook, version: str,
                                                                     headers: tuple[str, ...]):
    body = (EXAMPLES / "vm-create-reference.json").read_bytes()
    with running(hook) as port:
        [response], closed = exchange(port, request("/validate", body, *headers, version=version))
    assert response.startswith(b"HTTP/1.1 200 OK\r\n") and b"\r\nconnection: close\r\n" in response
    assert closed


def test_a_chunked_body_sent_in_pieces(hook: Webhook):
    body = (EXAMPLES / "vm-create-expand.json").read_bytes()
    head = b"POST /mutate HTTP/1.1\r\nhost: webhook\r\ntransfer-encoding: chunked\r\n\r\n"
    with running(hook) as port, socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head)
        for start in range(0, len(body), 700):
            piece = body[start:start + 700]
            sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
            time.sleep(0.01)
        sock.sendall(b"0\r\n\r\n")
        response = read_response(sock, bytearray())
    assert b'"patchType":"JSONPatch"' in response


def test_over_the_cap_then_the_connection_goes_on(hook: Webhook):
    small = (EXAMPLES / "vm-create-reference.json").read_bytes()
    big = b" " * (64 * 1024 + 10)
    chunked_big = b"POST /validate HTTP/1.1\r\nhost: w\r\ntransfer-encoding: chunked\r\n\r\n" + b"".join(
        b"%x\r\n%s\r\n" % (len(big[i:i + 4096]), big[i:i + 4096]) for i in range(0, len(big), 4096)) + b"0\r\n\r\n"
    with running(hook) as port:
        responses, closed = exchange(port, request("/mutate", big) + chunked_big + request("/validate", small), 3)
    assert [r.split(b"\r\n", 1)[0] for r in responses] == [b"HTTP/1.1 413 Request Entity Too Large"] * 2 + [
        b"HTTP/1.1 200 OK"]
    assert b"request body larger than 65536 bytes" in responses[0] and not closed


def test_over_the_cap_is_answered_before_the_body_is_all_sent(hook: Webhook):
    declared = b"POST /mutate HTTP/1.1\r\nhost: w\r\ncontent-length: 1073741824\r\n\r\n{\"apiVersion\":"
    chunk = b"x" * 8192
    chunked = b"POST /validate HTTP/1.1\r\nhost: w\r\ntransfer-encoding: chunked\r\n\r\n" + (
        b"%x\r\n%s\r\n" % (len(chunk), chunk)) * 9  # past 64 KiB, no last chunk
    with running(hook) as port:
        for data in (declared, chunked):
            with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
                sock.sendall(data)
                response = read_response(sock, bytearray())
            assert response.startswith(b"HTTP/1.1 413 ") and b"request body larger than 65536 bytes" in response
    assert hook.metrics.in_flight == 0


def test_a_client_gone_mid_body_leaves_the_server_answering(hook: Webhook):
    body = (EXAMPLES / "vm-create-reference.json").read_bytes()
    with running(hook) as port:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(request("/validate", body)[:-20])
        time.sleep(0.1)
        [response], _ = exchange(port, request("/validate", body))
    assert response.startswith(b"HTTP/1.1 200 OK")
    assert hook.metrics.in_flight == 0


def test_a_failing_answer_is_a_500_and_a_closed_connection(hook: Webhook, monkeypatch: pytest.MonkeyPatch):
    def broken(*_: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(door, "review_answer", broken)
    with running(hook) as port:
        [response], closed = exchange(port, request("/validate", b"{}"))
    assert response.startswith(b"HTTP/1.1 500 Internal Server Error\r\n")
    assert response.endswith(b"\r\n\r\nInternal Server Error") and b"connection: close" in response
    assert closed


def named(review: Any, ctx: ReviewContext) -> ReviewReply:
    """A handler answering with the name it looked up and the thread it ran on."""
    name = ctx.source.get(review["request"]["name"])  # type: ignore[attr-defined]  # LiveSource
    body = orjson.dumps({"name": name, "thread": threading.current_thread().name})
    return ReviewReply(True, body, "VirtualMachine", "allowed")


# specific: the smallest request the door parses, its uid the name (not tests.kit.builders.review's full shape)
def live_review(name: str) -> bytes:
    return orjson.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
        "uid": name, "kind": {"group": "kubevirt.io", "version": "v1", "kind": "VirtualMachine"},
        "operation": "CREATE", "name": name, "object": {"metadata": {"name": name}}}})


def test_a_review_needing_a_live_lookup_keeps_the_order_of_what_follows():
    hook = Webhook(ctx=ReviewContext(source=LiveSource({"cached"}, 0.3)), offload=True)  # type: ignore[arg-type]
    data = request("/validate", live_review("uncached")) + request("/validate", live_review("cached"))
    with running(hook, {"/validate": ("validate", named)}) as port:
        responses, closed = exchange(port, data, 2)
    first, second = (orjson.loads(r.partition(b"\r\n\r\n")[2]) for r in responses)
    assert first["name"] == "uncached" and first["thread"] != "uvicorn-door"  # a worker thread
    assert second["name"] == "cached"  # after the first, though it needed no lookup
    assert not closed and hook.metrics.in_flight == 0


@pytest.fixture
def sampled_lines(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[dict]]:
    """The review lines `_answered` writes; the allowed reviews' sampling back to 1 in 1 afterwards."""
    lines: list[dict] = []
    monkeypatch.setattr(door, "log_review", lines.append)
    yield lines
    reviewlog.set_allowed_sampling(1)


def answer_in_process(hook: Webhook, path: str, body: bytes) -> None:
    async def read() -> bytes:
        return body

    asyncio.run(door.review_answer(read, hook, *door.REVIEWS[path]))


@pytest.mark.pure_python  # sampled_lines replaces asgi's log_review: compiled callers do not see the patch
@pytest.mark.parametrize("every, logged", [(1, 6), (3, 2), (0, 0)])
def test_allowed_reviews_are_sampled_and_refusals_and_patches_always_logged(
        hook: Webhook, sampled_lines: list[dict], every: int, logged: int):
    reviewlog.set_allowed_sampling(every)
    for _ in range(6):
        answer_in_process(hook, "/validate", (EXAMPLES / "vm-create-reference.json").read_bytes())
    allowed = [line for line in sampled_lines if line["outcome"] in ("allowed", "skipped")]
    assert len(allowed) == logged
    assert all(line.get("sampled", 1) == max(every, 1) for line in allowed)
    del sampled_lines[:]
    for path, example in (("/mutate", "vm-create-expand.json"), ("/validate", "vm-conflict.json"),
                          ("/mutate", "vm-missing-reference.json")):
        for _ in range(2):
            answer_in_process(hook, path, (EXAMPLES / example).read_bytes())
    answer_in_process(hook, "/mutate", b"{not json")
    assert [line["outcome"] for line in sampled_lines] == ["patched"] * 2 + ["denied"] * 4 + ["rejected"]
    assert not any("sampled" in line for line in sampled_lines)
    assert hook.metrics.in_flight == 0
