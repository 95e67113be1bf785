"""`instancetype-webhook audit`: what a policy would do to the VMs already stored (read-only).

For every VM: flatten (patch operation count and paths), refuse (the causes /mutate would answer),
unresolved (a reference that does not resolve), skip (and why) or unchanged (no matcher). Decided by
the webhook's own /mutate function. Exit status: 0 when no VM is refused, unresolved or failed, 1 otherwise,
2 when the cluster cannot be read.
"""
from __future__ import annotations

import argparse
import sys

from app.cli.fleet import add_selection, open_for, with_progress


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("audit", help="report what a policy would do to the stored VMs (read-only)",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_selection(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from app.fleet.audit import audit
    from app.fleet.report import audit_document, write_document, write_table

    opened = open_for(args, "audit")
    if isinstance(opened, int):
        return opened
    session, namespace, shard = opened
    findings = with_progress(args, "audit", session,
                             lambda total, tick: audit(session.client, session.ctx, namespace, shard, total, tick),
                             "audit: listing VMs: ")
    if findings is None:
        return 2
    if args.output == "table":
        write_table(findings, sys.stdout, f"policy {args.policy}")
    else:
        write_document(audit_document(args.policy, findings), args.output, sys.stdout)
    return 1 if any(f.action in ("refuse", "unresolved", "failed") for f in findings) else 0
