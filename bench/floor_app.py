"""The floor: a bare ASGI app doing the least an admission webhook can do.

It reads the whole AdmissionReview body, parses it with orjson, and answers `allowed: true`
for the request's uid, serialised with orjson. No framework, no validation, no routing: whatever
our service costs above this is the price of FastAPI plus our own work.

Run: python bench/floor_app.py --port 18080 [--tls-cert F --tls-key F]
"""
from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable
from typing import Any

import orjson

Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
JSON_HEADERS = [(b"content-type", b"application/json")]


async def read_body(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)


def answer(body: bytes) -> bytes:
    review = orjson.loads(body)
    request = review.get("request") or {}
    return orjson.dumps({
        "apiVersion": review.get("apiVersion", "admission.k8s.io/v1"),
        "kind": "AdmissionReview",
        "response": {"uid": request.get("uid", ""), "allowed": True},
    })


async def app(scope: dict[str, Any], receive: Receive, send: Send) -> None:
    if scope["type"] != "http":  # uvicorn runs with lifespan off; websockets are not served
        return
    # GET is /readyz, /healthz: the harness waits on it
    payload = b'{"status":"ok"}' if scope["method"] == "GET" else answer(await read_body(receive))
    await send({"type": "http.response.start", "status": 200,
                "headers": [*JSON_HEADERS, (b"content-length", str(len(payload)).encode())]})
    await send({"type": "http.response.body", "body": payload})


def main() -> None:
    import uvicorn

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--tls-cert")
    parser.add_argument("--tls-key")
    args = parser.parse_args()
    uvicorn.run(app, host=args.host, port=args.port, workers=1, loop="uvloop", http="httptools",
                access_log=False, log_level="warning", lifespan="off",
                ssl_certfile=args.tls_cert, ssl_keyfile=args.tls_key)


if __name__ == "__main__":
    main()
