"""Our service over plain HTTP, for the benchmark's plain rows only.

The shipped `serve` command is HTTPS-only by design (no plain-HTTP admission endpoint), so this
builds the same app the way `serve` does (`instancetype_webhook.server.run.serve_one`: the context from
`instancetype_webhook.assembly.assemble`, the same metrics, JSON review log, app factory and uvicorn options) and
runs it without TLS on loopback.
The TLS rows of the benchmark use the real `serve` command.

Run: python bench/plain_server.py --port 18081 [--policy expand] [--catalog DIR]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import uvicorn

sys.path.insert(1, str(Path(__file__).resolve().parent.parent))  # the repo root, for `instancetype_webhook`

from instancetype_webhook.assembly import assemble  # noqa: E402  (after the sys.path set-up)
from instancetype_webhook.server.app import create_app  # noqa: E402  (after the sys.path set-up)
from instancetype_webhook.server.logconfig import configure  # noqa: E402  (after the sys.path set-up)
from instancetype_webhook.server.run import transport_options, webhook  # noqa: E402  (after the sys.path set-up)
from instancetype_webhook.settings import ServerSettings  # noqa: E402  (after the sys.path set-up)


def build_app(settings: ServerSettings):
    assembly = assemble(settings)
    hook = webhook(settings, assembly)
    if settings.metrics_port:
        hook.metrics.serve(settings.metrics_port, settings.metrics_host)
    return create_app(hook, None, assembly.where)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--policy", default="expand")
    parser.add_argument("--catalog")
    parser.add_argument("--metrics-port", type=int, default=0)
    args = parser.parse_args()
    settings = ServerSettings(host=args.host, port=args.port, policy=args.policy, catalog=args.catalog,
                              metrics_port=args.metrics_port)
    configure(settings.log_level, settings.log_allowed)
    uvicorn.run(build_app(settings), host=settings.host, port=settings.port, access_log=False, log_config=None,
                log_level=settings.log_level, lifespan="off", server_header=False, **transport_options())


if __name__ == "__main__":
    main()
