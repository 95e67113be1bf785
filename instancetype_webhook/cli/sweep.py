"""`instancetype-webhook sweep`: flatten the VMs already stored, each exactly as /mutate would.

Each write is a PUT with the resourceVersion the VM was read at; on a 409 Conflict the VM is read
again, decided again and retried with backoff, so concurrent edits are kept. VMs that cannot be
flattened are reported and not written; a second sweep writes nothing. Exit status: 0 when no VM was
refused, unresolved or failed, 1 otherwise, 2 when the cluster cannot be used.

With --events each VM flattened gets a Normal event (reason Flattened) and each VM that could not be
gets a Warning (FlattenRefused, ReferenceNotFound, FlattenFailed) with the reason as its note, shown
by `kubectl describe vm`; a repeat within 6 minutes extends the event's series instead of adding one.
"""
from __future__ import annotations

import argparse
import sys

from instancetype_webhook.cli.command import add_command
from instancetype_webhook.cli.fleet import add_selection, open_for, with_progress


def register(subparsers: argparse._SubParsersAction) -> None:
    p = add_command(subparsers, "sweep", "flatten the stored VMs as /mutate would (resourceVersion-safe)", __doc__)
    add_selection(p)
    p.add_argument("--dry-run", action="store_true", help="server-side dry run (dryRun=All): nothing is stored")
    p.add_argument("--rate", type=float, default=0.0, help="at most this many writes per second (0: no limit)")
    p.add_argument("--concurrency", type=int, default=8, help="VMs decided and written at once (default 8)")
    p.add_argument("--events", action="store_true",
                   help="record an Event (events.k8s.io/v1) on each VM flattened (Normal) or not (Warning), "
                        "aggregated into a series when it repeats")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from instancetype_webhook.fleet.report import SWEEP_NAMES, sweep_document, write_document, write_table
    from instancetype_webhook.fleet.sweep import SweepOptions, sweep

    if args.concurrency < 1 or args.rate < 0:
        print("sweep: --concurrency must be at least 1 and --rate not negative", file=sys.stderr)
        return 2
    opened = open_for(args, "sweep")
    if isinstance(opened, int):
        return opened
    session, namespace, shard = opened
    session.client.set_pool_size(args.concurrency + 2)
    recorder = None
    if args.events and not args.dry_run:
        from instancetype_webhook.fleet.events import Recorder

        recorder = Recorder(session.client, args.policy)
    options = SweepOptions(dry_run=args.dry_run, rate=args.rate, concurrency=args.concurrency, shard=shard,
                           record=(lambda f: recorder.record(f.reference())) if recorder else None)
    result = with_progress(args, "sweep", session,
                           lambda total, tick: sweep(session.client, session.ctx, namespace, options, total, tick),
                           "sweep: ")
    if result is None:
        return 2
    if args.output == "table":
        title = f"policy {args.policy}" + (" (dry run: nothing stored)" if args.dry_run else "")
        write_table(result.findings, sys.stdout, title, {"writes": result.writes,
                                                         "conflicts retried": result.conflicts_retried,
                                                         "errors retried": result.errors_retried,
                                                         "disagreements": result.disagreements}, SWEEP_NAMES)
    else:
        write_document(sweep_document(args.policy, result, args.dry_run), args.output, sys.stdout)
    if recorder is not None:
        sys.stdout.flush()
        print(f"sweep: {recorder.summary()}", file=sys.stderr)
    return 1 if any(f.action in ("refuse", "unresolved", "failed") for f in result.findings) else 0
