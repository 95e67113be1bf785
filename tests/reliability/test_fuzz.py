"""Bad input over HTTPS: every request gets 200 with a valid AdmissionReview or a 4xx JSON error;
never a 5xx, a hang or a dead worker. Hypothesis drives AdmissionReviews (good, malformed VMs and
matchers, broken envelopes) and raw bodies (invalid UTF-8, duplicate keys, deep nesting, ...).

Counts: CI runs a bounded number of examples; HYPOTHESIS_PROFILE=long runs 100,000 reviews.
"""
from __future__ import annotations

import re
import socket
import ssl
import time

import httpx
import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.kit import fault_strategies as S
from tests.kit.answers import problems
from tests.kit.fuzz import LONG, fuzz_settings
from tests.kit.server import Server

HEADERS = {"content-type": "application/json"}
COUNTS: dict[str, int] = {}


@pytest.fixture(scope="module")
def client(expand_server: Server):
    with expand_server.client() as c:
        yield c
    _assert_alive(expand_server)


def _assert_alive(server: Server) -> None:
    """The worker is still the one we started, answers health checks and hit no handler exception."""
    assert server.proc.poll() is None, server.logs()[-2000:]
    with server.client() as c:
        assert c.get("/healthz").status_code == 200
    text = httpx.get(server.metrics_url + "/metrics", timeout=5).text
    crashed = re.findall(r'instancetype_webhook_errors_total\{endpoint="\w+",reason="exception"\} (\S+)', text)
    assert sum(float(x) for x in crashed) == 0, "a handler raised: " + server.logs()[-3000:]
    assert "Traceback" not in server.logs(), server.logs()[-3000:]


def _post(client: httpx.Client, path: str, body: bytes) -> httpx.Response:
    start = time.monotonic()
    resp = client.post(path, content=body, headers=HEADERS)
    assert time.monotonic() - start < 9, f"{path} took {time.monotonic() - start:.1f}s"
    return resp


def _decoded(body: bytes) -> object:
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        return None


@fuzz_settings(ci=400)
@given(doc=S.reviews(), path=st.sampled_from(["/mutate", "/validate"]))
def test_every_review_gets_a_well_formed_answer(client: httpx.Client, doc: object, path: str):
    body = orjson.dumps(doc)
    resp = _post(client, path, body)
    COUNTS["reviews"] = COUNTS.get("reviews", 0) + 1
    assert problems(resp, doc) == [], body[:500]


@fuzz_settings(ci=150, long=20000)
@given(body=S.raw_bodies(), path=st.sampled_from(["/mutate", "/validate", "/preview"]))
def test_every_raw_body_gets_a_well_formed_answer(client: httpx.Client, body: bytes, path: str):
    resp = _post(client, path, body)
    COUNTS["raw"] = COUNTS.get("raw", 0) + 1
    if path == "/preview":
        assert resp.status_code < 500, resp.text[:300]
        return
    assert problems(resp, _decoded(body)) == [], body[:300]


@fuzz_settings(ci=60, long=20000)
@given(vm=S.malformed_vms())
def test_preview_never_fails_on_a_vm(client: httpx.Client, vm: dict):
    resp = _post(client, "/preview?namespace=ns", orjson.dumps(vm))
    assert resp.status_code in (200, 400), resp.text[:300]
    assert isinstance(resp.json(), dict)


# ------------------------------------------------------------------ specific hostile bodies

def test_invalid_utf8_is_a_400_naming_it(client: httpx.Client):
    good = orjson.dumps(S.review(S.base_vm()))
    for junk in (b"\xff", b"\xc3\x28", b"\xed\xa0\x80"):
        resp = _post(client, "/mutate", good.replace(b'"name":"vm"', b'"name":"v' + junk + b'm"', 1))
        assert resp.status_code == 400 and "UTF-8" in resp.json()["error"], resp.text


def test_duplicate_keys_take_the_last_value_like_the_api_server(client: httpx.Client):
    """Go's encoding/json (the API server) keeps the last of duplicate keys; so do we, so the patch
    is computed on the object the API server holds."""
    doc = S.review(S.base_vm())
    body = orjson.dumps(doc)
    body = body.replace(b'"uid":', b'"uid":"first","uid":', 1)
    resp = _post(client, "/validate", body)
    assert resp.status_code == 200 and resp.json()["response"]["uid"] == doc["request"]["uid"]
    vm = S.base_vm()
    vm["spec"]["instancetype"] = {"name": "u1.medium"}
    raw = orjson.dumps(S.review(vm)).replace(b'"instancetype":{', b'"instancetype":{"name":"nope","x":1},'
                                                                   b'"instancetype":{', 1)
    answer = _post(client, "/mutate", raw).json()["response"]
    assert answer["allowed"] and answer["patchType"] == "JSONPatch"


@pytest.mark.parametrize("depth", [150, 198, 199, 1000, 100_000])
def test_nesting_depth_is_bounded(client: httpx.Client, depth: int):
    doc = S.review(S.base_vm())
    body = orjson.dumps(doc)[:-2] + b',"deep":' + S.nested(depth) + b"}}"
    resp = _post(client, "/validate", body)
    if depth + 2 <= 200:  # the review and its request are two levels
        assert resp.status_code == 200
    else:
        assert resp.status_code == 400, resp.text[:200]
        assert re.search("deeper|depth", resp.json()["error"]), resp.text[:200]


def test_huge_but_legal_review_is_answered(client: httpx.Client):
    vm = S.base_vm(user_data="#cloud-config\n" + "y" * (5 * 1024 * 1024))
    vm["spec"]["instancetype"] = {"name": "u1.medium"}
    vm["metadata"]["annotations"] = {f"k{i}": "v" * 100 for i in range(5000)}
    resp = _post(client, "/mutate", orjson.dumps(S.review(vm)))
    assert resp.status_code == 200 and resp.json()["response"]["allowed"]


def test_oversized_body_is_refused_before_it_is_all_sent(expand_server: Server):
    """A Content-Length over the cap gets 413 while the client has sent only a few bytes."""
    host, port = expand_server.url.removeprefix("https://").split(":")
    ctx = expand_server.certs.client_context()
    with socket.create_connection((host, int(port)), timeout=5) as raw, \
            ctx.wrap_socket(raw, server_hostname=host) as tls:
        tls.sendall(b"POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    b"Content-Length: 1073741824\r\n\r\n{\"apiVersion\":")
        reply = _read_reply(tls)
    assert reply.startswith(b"HTTP/1.1 413"), reply[:200]
    assert b'"error"' in reply


def test_oversized_chunked_body_is_cut_off(expand_server: Server):
    """No Content-Length (chunked): the server stops at the cap and answers 413."""
    def chunks():
        for _ in range(64):
            yield b"x" * (256 * 1024)  # 16 MiB in all, twice the cap

    with expand_server.client() as c:
        try:
            resp = c.post("/validate", content=chunks(), headers=HEADERS)
        except (httpx.WriteError, httpx.RemoteProtocolError, httpx.ReadError):
            return  # the server closed the connection after refusing: also no 5xx
    assert resp.status_code == 413, resp.text[:200]


def _read_reply(tls: ssl.SSLSocket) -> bytes:
    data = b""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and b"}" not in data.partition(b"\r\n\r\n")[2]:
        try:
            chunk = tls.recv(65536)
        except (TimeoutError, ssl.SSLError, ConnectionError):
            break
        if not chunk:
            break
        data += chunk
    return data


def test_fuzz_counts_reported():
    """Leaves the example counts in the test output (-s shows them); long mode must reach 100,000."""
    print(f"\nfuzz examples: {COUNTS}")
    if LONG and COUNTS.get("reviews") is not None:
        assert COUNTS["reviews"] >= 100_000
