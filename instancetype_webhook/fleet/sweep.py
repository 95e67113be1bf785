"""Sweep: write every stored VM of a selection as /mutate would answer it (flat, under the policy).

Per VM: decide (`finding.assess`, /mutate's own function); if it flattens, PUT the flat VM with the
resourceVersion it was read at as the precondition. The write passes through the webhook again; the
stored object that comes back is compared with what was sent, so a disagreement is reported. On a
409 Conflict the VM is read again, decided again and retried with exponential backoff and jitter, so
an edit made in the meantime is never lost. VMs that cannot be flattened are reported and not written.
A VM with no matcher is not written at all, so a second sweep writes nothing. `dry_run` sends
`dryRun=All`: the API server admits (and the webhook sees) every write, nothing is stored.
"""
from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

from instancetype_webhook.admission.context import ReviewContext
from instancetype_webhook.fleet.finding import Finding, assess
from instancetype_webhook.fleet.selection import Shard, select
from instancetype_webhook.sources.kube import Conflict, KubeError, VMClient

IGNORED_BY_SERVER = ("resourceVersion", "generation", "managedFields")
RETRYABLE = (0, 429, 500, 502, 503, 504)  # 0: no answer (connection refused, timeout)


class RateLimiter:
    """At most `rate` acquisitions per second across threads (0: unlimited)."""

    def __init__(self, rate: float):
        self.interval = 1.0 / rate if rate > 0 else 0.0
        self.next = time.monotonic()
        self.lock = threading.Lock()

    def acquire(self) -> None:
        if not self.interval:
            return
        with self.lock:
            now = time.monotonic()
            at = max(self.next, now)
            self.next = at + self.interval
        if at > now:
            time.sleep(at - now)


@dataclass
class SweepOptions:
    dry_run: bool = False
    rate: float = 0.0  # writes per second, 0 = unlimited
    concurrency: int = 4
    max_attempts: int = 8
    backoff: float = 0.05  # first retry delay, doubled each time (with jitter), at most 2 s
    shard: Shard | None = None
    record: Callable[[Finding], None] | None = None  # called in the worker with each VM's final finding (events)


@dataclass
class SweepResult:
    findings: list[Finding] = field(default_factory=list)
    conflicts_retried: int = 0
    errors_retried: int = 0
    writes: int = 0
    disagreements: int = 0


def _comparable(vm: dict[str, Any]) -> dict[str, Any]:
    meta = {k: v for k, v in (vm.get("metadata") or {}).items() if k not in IGNORED_BY_SERVER}
    return {**{k: v for k, v in vm.items() if k not in ("status", "kind", "apiVersion")}, "metadata": meta}


class Sweeper:
    def __init__(self, client: VMClient, ctx: ReviewContext, options: SweepOptions):
        self.client, self.ctx, self.options = client, ctx, options
        self.limiter = RateLimiter(options.rate)
        self.lock = threading.Lock()
        self.result = SweepResult()

    def sweep_vm(self, vm: dict[str, Any]) -> Finding:
        """Decide and (when it flattens) write one VM; on a conflict or a transient error (429, 5xx, no
        answer) wait, re-read, decide again and retry, at most `max_attempts` times."""
        last = ""
        for attempt in range(self.options.max_attempts):
            finding, answer = assess(vm, self.ctx)
            if finding.action != "flatten" or answer is None or answer.flat is None:
                return finding
            self.limiter.acquire()
            try:
                stored = self.client.replace(answer.flat, dry_run=self.options.dry_run)
            except KubeError as exc:
                if exc.status == 404:
                    finding.action, finding.reason = "unchanged", "deleted during the sweep"
                    return finding
                if not isinstance(exc, Conflict) and exc.status not in RETRYABLE:
                    # 400/422: refused on write (e.g. by an admission webhook); 401/403: not allowed
                    finding.action = "refuse" if exc.status in (400, 422) else "failed"
                    finding.reason = f"write failed: {exc}"
                    return finding
                with self.lock:
                    if isinstance(exc, Conflict):
                        self.result.conflicts_retried += 1
                    else:
                        self.result.errors_retried += 1
                last = str(exc)
                time.sleep(min(self.options.backoff * 2 ** attempt, 2.0) * random.uniform(0.5, 1.5))
                try:
                    fresh = self.client.get(finding.namespace, finding.name)
                except KubeError as err:
                    last = f"re-reading: {err}"
                    continue  # read again at the next attempt (vm unchanged)
                if fresh is None:
                    finding.action, finding.reason = "unchanged", "deleted during the sweep"
                    return finding
                vm = fresh
                continue
            with self.lock:
                self.result.writes += not self.options.dry_run
                if _comparable(stored) != _comparable(answer.flat):
                    self.result.disagreements += 1
                    finding.warnings.append("the stored VM differs from the sweep's decision (another webhook "
                                            "or the API server changed it on write)")
            return finding
        finding.action = "failed"
        finding.reason = f"gave up after {self.options.max_attempts} attempts: {last}"
        return finding

    def sweep_and_record(self, vm: dict[str, Any]) -> Finding:
        """`one`, then the finding handed to `options.record` (not in a dry run: nothing happened)."""
        finding = self.sweep_vm(vm)
        if self.options.record is not None and not self.options.dry_run:
            self.options.record(finding)
        return finding


def sweep(client: VMClient, ctx: ReviewContext, namespace: str | None, options: SweepOptions,
          on_total: Callable[[int], None] | None = None,
          on_vm: Callable[[Finding], None] | None = None) -> SweepResult:
    sweeper = Sweeper(client, ctx, options)
    workers = max(1, options.concurrency)
    pending: set[Future[Finding]] = set()

    def collect(done: set[Future[Finding]]) -> None:
        for future in done:
            finding = future.result()
            sweeper.result.findings.append(finding)
            if on_vm:
                on_vm(finding)

    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="sweep") as pool:
        for vm in select(client, namespace, options.shard, on_total):
            if len(pending) >= 2 * workers:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                collect(done)
            pending.add(pool.submit(sweeper.sweep_and_record, vm))
        collect(wait(pending)[0])
    sweeper.result.findings.sort(key=lambda f: (f.namespace, f.name))
    return sweeper.result
