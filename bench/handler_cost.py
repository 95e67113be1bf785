"""What a review's handler costs inside the running server, and what everything around it costs.

    python bench/handler_cost.py [--endpoint mutate] [--seconds 5] [--rounds 3] [--python PY] [--review FILE]
    python bench/handler_cost.py --quick   (1 s rounds: proves it runs, the figures mean little)

Starts three servers over TLS, one after the other, each pinned to one CPU with wrk on another (with 2+ CPUs):
the shipped `serve` (one worker, policy expand, the bundled catalogue); the same `serve` with the endpoint's
handler replaced by one that hands back the answer it computed for the first review (everything else is real:
the body read, the decoding, the metrics, the log line, the response write); and the floor (`floor_app.py`, a
bare uvicorn + orjson answer). Each is driven with wrk at 16 connections for `--rounds` rounds of `--seconds`,
and the server's CPU time over the reviews it answered gives microseconds of CPU per review: the median round.

    handler in the server   = shipped - canned
    around the handler      = canned - floor   (what our path adds to uvicorn, TLS and the kernel)

Set beside `bench/stages.py` (the handler in a warm loop, in process), the first line says how much more a
handler costs between the server's other work than when it runs alone. CPU time, not requests per second:
another process taking the core does not count against the server. `--python` picks the interpreter of our
servers (e.g. `.venv-compiled/bin/python` for the compiled build; its installed package is what runs).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parent.parent)]  # bench/, repo root

from load import run_wrk  # noqa: E402  (after the sys.path set-up)
from review import write_review  # noqa: E402  (after the sys.path set-up)
from run import cpu_split  # noqa: E402  (after the sys.path set-up)
from servers import Server, free_port  # noqa: E402  (after the sys.path set-up)
from targets import PY, Tls, floor_server, serve_argv  # noqa: E402  (after the sys.path set-up)
from tlsfiles import write_self_signed  # noqa: E402  (after the sys.path set-up)

# `serve` with the endpoint's handler answering every review with its first answer (a fresh ReviewReply, so the
# log line and metrics still run); the public REVIEWS table of the server's ASGI door is what it replaces.
CANNED = """
import sys
from instancetype_webhook.admission.context import ReviewReply
from instancetype_webhook.server import asgi
endpoint, handler = asgi.REVIEWS[sys.argv[1]]
first = []
def canned(review, ctx):
    if not first:
        first.append(handler(review, ctx))
    r = first[0]
    return ReviewReply(r.allowed, r.body, r.kind, r.outcome, r.patch_ops, r.policy)
asgi.REVIEWS[sys.argv.pop(1)] = (endpoint, canned)
from instancetype_webhook.cli import main
sys.exit(main())
"""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="A review handler's CPU cost inside the running server")
    parser.add_argument("--endpoint", choices=("mutate", "validate"), default="mutate")
    parser.add_argument("--seconds", type=int, default=5, help="seconds per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--python", default=PY, help="the interpreter of our servers (default: this one)")
    parser.add_argument("--review", help="an AdmissionReview JSON file to POST (default: bench/review.py's)")
    parser.add_argument("--quick", action="store_true", help="1 s rounds, 1 round: proves it runs")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = parser.parse_args(argv)
    args.python = os.path.abspath(args.python)  # the servers run elsewhere; not resolved: a venv's python is a link
    return args


def _ours(python: str, tls: Tls, logs: Path, cpus: set[int] | None, canned_path: str | None) -> Server:
    port = free_port()
    argv = serve_argv(port, tls)
    argv[0] = python
    if canned_path is not None:  # `python -m instancetype_webhook serve ...` -> `python -c CANNED PATH serve ...`
        argv[1:3] = ["-c", CANNED, canned_path]
    name = "canned" if canned_path else "shipped"
    return Server(name, argv, f"https://127.0.0.1:{port}", cpus=cpus, log_path=logs / f"{name}.log", cwd=logs)


def cpu_per_review(server: Server, url: str, body: Path, seconds: int, rounds: int,
                   wrk_cpus: set[int] | None) -> list[float]:
    """Microseconds of the server's CPU per answered review, per round (after a one-second warm-up)."""
    run_wrk(url, body, 16, 1, wrk_cpus)
    figures = []
    for _ in range(rounds):
        before = server.cpu_seconds()
        result = run_wrk(url, body, 16, seconds, wrk_cpus)
        if result["error_count"] or not result["requests"]:
            raise RuntimeError(f"{server.name}: wrk saw {result['errors']} over {result['requests']} requests")
        figures.append((server.cpu_seconds() - before) / result["requests"] * 1e6)
    return figures


def measure(args: argparse.Namespace) -> dict[str, object]:
    seconds, rounds = (1, 1) if args.quick else (args.seconds, args.rounds)
    server_cpus, wrk_cpus = cpu_split(True)
    path = "/" + args.endpoint
    with tempfile.TemporaryDirectory(prefix="handler-cost-") as tmp:
        logs = Path(tmp)
        tls = write_self_signed(logs)
        body = Path(args.review) if args.review else logs / "review.json"
        if not args.review:
            write_review(body)
        makers: dict[str, Callable[[], Server]] = {
            "shipped": lambda: _ours(args.python, tls, logs, server_cpus, None),
            "canned": lambda: _ours(args.python, tls, logs, server_cpus, path),
            "floor": lambda: floor_server("tls", tls, logs, server_cpus),
        }
        runs: dict[str, list[float]] = {}
        for name, make in makers.items():
            with make() as server:
                server.wait_ready()
                url = server.base_url + path
                runs[name] = cpu_per_review(server, url, body, seconds, rounds, wrk_cpus)
    median = {name: statistics.median(values) for name, values in runs.items()}
    return {"endpoint": args.endpoint, "python": args.python, "rounds": runs, "median_us": median,
            "handler_in_server_us": median["shipped"] - median["canned"],
            "around_handler_us": median["canned"] - median["floor"]}


def _compiled(python: str) -> str:
    """What `instancetype-webhook --version` of that interpreter says about its build (outside the repository)."""
    out = subprocess.run([python, "-m", "instancetype_webhook", "--version"], capture_output=True, text=True,
                         cwd=tempfile.gettempdir(), check=False).stdout.strip()
    return out[out.index("(") + 1:-1] if out.endswith(")") else "unknown build"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    result = measure(args)
    compiled = _compiled(args.python)
    result["compiled"] = compiled
    if args.json:
        print(json.dumps(result))
        return 0
    median = result["median_us"]
    assert isinstance(median, dict)
    for name in ("shipped", "canned", "floor"):
        rounds = ", ".join(f"{v:.1f}" for v in result["rounds"][name])  # type: ignore[index]
        print(f"{name:8} {median[name]:7.1f} us CPU per review (rounds: {rounds})")
    print(f"our servers: {args.python} ({compiled})")
    print(f"/{args.endpoint} handler in the server: {result['handler_in_server_us']:.1f} us; "
          f"around it, over the floor: {result['around_handler_us']:.1f} us")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
