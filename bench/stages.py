"""What one review costs in-process, stage by stage, without HTTP: where the service's time goes.

    python bench/stages.py [--number 2000]

Times each step our /mutate and /validate handlers take for the benchmark's review (parse, the
instancetype checks, the expansion, the patch, the response, the log line, the metrics), plus
the whole handlers, as microseconds per call (best of 5 repeats). The HTTP rows of bench/run.py
add the framework and the socket on top of these figures.
"""
from __future__ import annotations

import argparse
import os
import sys
import timeit
from pathlib import Path
from typing import Any, Callable

import orjson

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parent.parent)]  # bench/, repo root

from review import admission_review, typical_vm  # noqa: E402

from app.patch import make_patch  # noqa: E402
from app.server import review as rv  # noqa: E402
from app.server.context import ReviewContext  # noqa: E402
from app.server.logs import configure, log_review, review_line  # noqa: E402
from app.server.metrics import Metrics  # noqa: E402
from app.server.mutate import flatten, mutate  # noqa: E402
from app.server.validate import validate  # noqa: E402
from app.sources.catalog import load_catalog  # noqa: E402


def per_call_us(func: Callable[[], Any], number: int) -> float:
    return min(timeit.repeat(func, number=number, repeat=5)) / number * 1e6


def quiet_review_log() -> None:
    """The server's review log as `serve` configures it, written to /dev/null (the cost stays in)."""
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - lives as long as the process
    configure("info")


def stages(number: int) -> dict[str, float]:
    from app.kubevirt.admission import validate_vm

    quiet_review_log()
    ctx = ReviewContext(source=load_catalog(), policy="expand")
    body = orjson.dumps(admission_review(typical_vm()))
    review = rv.parse_review(body)
    request = review["request"]
    vm = request["object"]
    namespace = vm["metadata"]["namespace"]
    flat = flatten(vm, namespace, ctx)
    ops = make_patch(vm, flat)
    metrics = Metrics()
    steps: dict[str, Callable[[], Any]] = {
        "orjson.loads(body)": lambda: orjson.loads(body),
        "parse_review(body)": lambda: rv.parse_review(body),
        "validate_vm (instancetype checks)": lambda: validate_vm(vm, ctx.source, ctx.cluster),
        "flatten (expand + provenance)": lambda: flatten(vm, namespace, ctx),
        "make_patch(vm, flat)": lambda: make_patch(vm, flat),
        "response(review, allow, ops)": lambda: rv.response(review, rv.Verdict.allow(), ops),
        "review_line + log_review": lambda: log_review(review_line("mutate", request, True, len(ops), 0.001,
                                                                   "patched", "expand")),
        "metrics.observe": lambda: metrics.observe("mutate", "CREATE", "VirtualMachine", "patched", 0.001),
        "validate handler (whole)": lambda: validate(review, ctx),
        "mutate handler (whole)": lambda: mutate(review, ctx),
    }
    return {name: round(per_call_us(step, number), 1) for name, step in steps.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description="Per-stage cost of one review, in-process")
    parser.add_argument("--number", type=int, default=2000, help="calls per repeat")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = stages(args.number)
    sys.stdout = sys.__stdout__
    if args.json:
        print(orjson.dumps(figures).decode())
    else:
        for name, us in figures.items():
            print(f"  {us:9.1f} us  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
