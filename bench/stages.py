"""What one review costs in-process, stage by stage, without HTTP: where the service's time goes.

    python bench/stages.py [--number 2000] [--review FILE] [--json]
    python bench/stages.py --number 5 --json   (the smallest run: proves every stage runs, the figures mean little)

Times each step our /mutate and /validate handlers take for the benchmark's review (parse, the instancetype
checks, the expansion, the patch, the patch with its imprint (what /mutate runs), the response, the log line,
the metrics), the whole handlers, /mutate on two UPDATEs of a running VM (a label change, which the
live-update warnings skip without a lookup, and a resize, which they plan; the VMI comes from memory, so the
row is the plan's CPU cost without the GET), and the whole ASGI app (`AdmissionApp`, what uvicorn calls: body,
parse, handler, metrics, log line, the two `send` messages) next to the floor's ASGI app doing its least
(`floor_app.py`), and `review_answer` (instancetype_webhook.server.asgi), the door's own work for a review
inside the ASGI app (read, parse, handler, metrics, log line; no ASGI messages), as microseconds of this
thread's CPU time per call (the best of 7 repeats). CPU time, not wall time: on a shared machine another
process taking the core does not count against the step. The HTTP rows of bench/run.py (and
../shared/bench/perf_ratio.py) add uvicorn, httptools and TLS on top; the floor pays exactly the same for
those, so `ASGI ours - ASGI floor` is what the ratio is made of.

`--review FILE` times an AdmissionReview from a file (e.g. the shared harness's perf-review.json)
instead of bench/review.py's.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

# bench/ first; the repository last, so that an environment with the package installed (the compiled build:
# `.venv-compiled/bin/python bench/stages.py`) times its own copy, not the tree's Python files
sys.path[:0] = [str(Path(__file__).resolve().parent)]
sys.path.append(str(Path(__file__).resolve().parent.parent))

from review import admission_review, typical_vm  # noqa: E402  (after the sys.path set-up)

from instancetype_webhook.admission import envelope as rv  # noqa: E402  (after the sys.path set-up)
from instancetype_webhook.admission.context import ReviewContext  # noqa: E402  (after the sys.path set-up)
from instancetype_webhook.admission.mutate import mutate  # noqa: E402  (after the sys.path set-up)
from instancetype_webhook.admission.stored import flatten  # noqa: E402  (after the sys.path set-up)
from instancetype_webhook.admission.validate import validate  # noqa: E402  (after the sys.path set-up)
from instancetype_webhook.kubevirt.configuration import DEFAULT_SETTINGS  # noqa: E402  (after the sys.path set-up)
from instancetype_webhook.kubevirt.imprint import patch_and_imprint  # noqa: E402  (after the sys.path set-up)
from instancetype_webhook.patch import make_patch  # noqa: E402  (after the sys.path set-up)
from instancetype_webhook.server.app import Webhook, create_app  # noqa: E402  (after the sys.path set-up)
from instancetype_webhook.server.asgi import review_answer  # noqa: E402  (after the sys.path set-up)
from instancetype_webhook.server.logconfig import configure  # noqa: E402  (after the sys.path set-up)
from instancetype_webhook.server.metrics import Metrics  # noqa: E402  (after the sys.path set-up)
from instancetype_webhook.server.reviewlog import (  # noqa: E402  (after the sys.path set-up)
    log_review,
    review_line,
    set_allowed_sampling,
)
from instancetype_webhook.sources.catalog import load_catalog  # noqa: E402  (after the sys.path set-up)


def per_call_us(func: Callable[[], Any], number: int, repeat: int = 7) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.thread_time()
        for _ in range(number):
            func()
        best = min(best, time.thread_time() - start)
    return best / number * 1e6


def asgi_per_call_us(app: Any, path: str, body: bytes, number: int, repeat: int = 7) -> float:
    """One POST through an ASGI app, in a running event loop, with receive/send doing nothing."""
    scope = {"type": "http", "method": "POST", "path": path,
             "headers": [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]}
    message = {"type": "http.request", "body": body, "more_body": False}

    async def receive() -> dict[str, Any]:
        return message

    async def send(_: dict[str, Any]) -> None:
        return None

    async def calls() -> float:
        best = float("inf")
        for _ in range(repeat):
            start = time.thread_time()
            for _ in range(number):
                await app(dict(scope), receive, send)
            best = min(best, time.thread_time() - start)
        return best / number * 1e6

    return asyncio.run(calls())


def quiet_review_log() -> None:
    """The server's review log as `serve --log-allowed 1` configures it (a line for every review: the costliest
    choice; the figure "allowed reviews unlogged" is --log-allowed 0), written to /dev/null (the cost stays in)."""
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - lives as long as the process
    configure("info", 1)


class RunningSource:
    """The catalogue plus one running VM's VMI and revisions, in memory: what the live-update warnings read
    from a cluster, without the network (the plan's own cost)."""

    def __init__(self, base: Any, vmi: dict[str, Any], revisions: dict[str, dict[str, Any]]):
        self.base, self.vmi, self.revisions = base, vmi, revisions
        self.default_namespace = base.default_namespace

    def get(self, kind: str, name: str, namespace: str | None = None) -> Any:
        return self.base.get(kind, name, namespace)

    def get_revision(self, name: str, namespace: str) -> Any:
        return self.revisions.get(name) or self.base.get_revision(name, namespace)

    def get_vmi(self, name: str, namespace: str) -> Any:
        return self.vmi


def live_update_reviews(vm: dict[str, Any]) -> tuple[ReviewContext, bytes, bytes]:
    """A context whose source holds `vm` running, and two UPDATE reviews of it: a resize (u1.medium ->
    u1.large, planned) and a label change (no lookup)."""
    import copy

    from instancetype_webhook.kubevirt.liveupdate import start_vm

    catalog = load_catalog()
    started = start_vm(vm, catalog, DEFAULT_SETTINGS)
    uid = (vm.get("metadata") or {}).get("uid", "")
    revisions = {**started.source.revisions,
                 f"revision-start-vm-{uid}-1": {"data": {"spec": started.start_spec}}}
    stored = {**started.stored_vm, "status": {**started.stored_vm["status"], "printableStatus": "Running"}}
    ctx = ReviewContext(source=RunningSource(catalog, started.vmi, revisions), policy="reference")
    resized = copy.deepcopy(stored)
    resized["spec"]["instancetype"] = {"name": "u1.large"}
    labelled = copy.deepcopy(stored)
    labelled["metadata"]["labels"] = {"team": "a"}
    return ctx, _update_review(resized, stored), _update_review(labelled, stored)


def _update_review(vm: dict[str, Any], old: dict[str, Any]) -> bytes:
    body = admission_review(vm, operation="UPDATE")
    body["request"]["oldObject"] = old
    return orjson.dumps(body)


def _running_vm() -> dict[str, Any]:
    return {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
            "metadata": {"name": "web", "namespace": "bench", "uid": "5e1f-bench-web", "generation": 1},
            "spec": {"runStrategy": "Always", "instancetype": {"name": "u1.medium"}, "preference": {"name": "fedora"},
                     "template": {"spec": {"domain": {"devices": {}}, "volumes": [
                         {"name": "rootdisk", "containerDisk": {"image": "quay.io/containerdisks/fedora:41"}}]}}}}


def stages(number: int, body: bytes | None = None) -> dict[str, float]:
    from floor_app import app as floor

    from instancetype_webhook.kubevirt.vm_webhook import validate_vm

    quiet_review_log()
    ctx = ReviewContext(source=load_catalog(), policy="expand")
    body = body or orjson.dumps(admission_review(typical_vm()))
    review = rv.parse_review(body)
    request = review["request"]
    vm = request["object"]
    namespace = vm["metadata"].get("namespace") or request.get("namespace") or "default"
    flat = flatten(vm, namespace, ctx)
    ops = make_patch(vm, flat)
    metrics = Metrics()
    steps: dict[str, Callable[[], Any]] = {
        "orjson.loads(body)": lambda: orjson.loads(body),
        "parse_review(body)": lambda: rv.parse_review(body),
        "validate_vm (instancetype checks)": lambda: validate_vm(vm, ctx.source, ctx.cluster),
        "flatten (expand + provenance)": lambda: flatten(vm, namespace, ctx),
        "make_patch(vm, flat)": lambda: make_patch(vm, flat),
        "patch_and_imprint(vm, flat)": lambda: patch_and_imprint(vm, flat),
        "response(review, allow, ops)": lambda: rv.response(review, rv.Verdict.allow(), ops),
        "review_line + log_review": lambda: log_review(review_line("mutate", request, True, len(ops), 0.001,
                                                                   "patched", "expand")),
        "metrics.observe": lambda: metrics.observe("mutate", "CREATE", "VirtualMachine", "patched", 0.001),
        "validate handler (whole)": lambda: validate(review, ctx),
        "mutate handler (whole)": lambda: mutate(review, ctx),
    }
    running_ctx, resize_body, label_body = live_update_reviews(_running_vm())
    resize_review, label_review = rv.parse_review(resize_body), rv.parse_review(label_body)
    steps["mutate handler (UPDATE, labels only: no live-update lookup)"] = lambda: mutate(label_review, running_ctx)
    steps["mutate handler (UPDATE resizing a running VM: planned)"] = lambda: mutate(resize_review, running_ctx)
    no_vmis = ReviewContext(source=running_ctx.source.base, policy="reference")
    steps["mutate handler (the same resize, no VMI source: not planned)"] = lambda: mutate(resize_review, no_vmis)
    figures = {name: round(per_call_us(step, number), 1) for name, step in steps.items()}
    ours = create_app(Webhook(ctx=ctx, metrics=metrics))
    figures["ASGI floor (floor_app.py)"] = round(asgi_per_call_us(floor, "/mutate", body, number), 1)
    figures["ASGI /validate (AdmissionApp)"] = round(asgi_per_call_us(ours, "/validate", body, number), 1)
    figures["ASGI /mutate (AdmissionApp)"] = round(asgi_per_call_us(ours, "/mutate", body, number), 1)
    # --log-allowed 0: an allowed review that changes nothing gets no line (not even built)
    set_allowed_sampling(0)
    figures["ASGI /validate (AdmissionApp, allowed reviews unlogged)"] = round(
        asgi_per_call_us(ours, "/validate", body, number), 1)
    set_allowed_sampling(1)
    # the door's own work for a review, without ASGI messages: parse, handler, metrics, log line
    hook = ours.hook

    async def read() -> bytes:
        return body

    loop = asyncio.new_event_loop()
    for endpoint, handler in (("validate", validate), ("mutate", mutate)):
        def step(endpoint: str = endpoint, handler: Any = handler) -> Any:
            return loop.run_until_complete(review_answer(read, hook, endpoint, handler))

        figures[f"review_answer /{endpoint}"] = round(per_call_us(step, number), 1)
    loop.close()
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description="Per-stage cost of one review, in-process")
    parser.add_argument("--number", type=int, default=2000, help="calls per repeat")
    parser.add_argument("--review", type=Path, help="an AdmissionReview JSON file to time instead of bench/review.py's")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = stages(args.number, args.review.read_bytes() if args.review else None)
    sys.stdout = sys.__stdout__
    if args.json:
        print(orjson.dumps(figures).decode())
    else:
        from instancetype_webhook.compiled import build_summary

        print(f"instancetype_webhook from {Path(rv.__file__).parent.parent} ({build_summary()})")
        for name, us in figures.items():
            print(f"  {us:9.1f} us  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
