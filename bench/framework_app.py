"""The framework floor (optional row `framework`): the floor's work, but inside FastAPI.

One POST route reads the body through Starlette's Request, parses it with orjson and answers
`allowed: true` with orjson in a plain Response, exactly as the floor does. Between the floor and
this row lies what FastAPI/Starlette cost; between this row and ours lies our own work.

Run: python bench/framework_app.py --port 18082 [--tls-cert F --tls-key F]
"""
from __future__ import annotations

import argparse

import orjson
from fastapi import FastAPI, Request
from fastapi.responses import Response
from floor_app import answer

app = FastAPI()


@app.post("/mutate", response_class=Response)
async def mutate(request: Request) -> Response:
    return Response(answer(await request.body()), media_type="application/json")


@app.get("/readyz", response_class=Response)
async def readyz() -> Response:
    return Response(orjson.dumps({"status": "ok"}), media_type="application/json")


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
