"""`instancetype-webhook audit`: what a policy would do to the VMs already stored (read-only).

For every VM: flatten (patch operation count and paths), refuse (the causes /mutate would answer),
unresolved (a reference that does not resolve), skip (and why) or unchanged (no matcher). Decided by
the webhook's own /mutate function. Exit status: 0 when no VM is refused, unresolved or failed, 1 otherwise,
2 when the cluster cannot be read.

With --report the results are also written as policy reports (one per namespace, replacing what the
previous run wrote): `policyreport` is wgpolicyk8s.io/v1alpha2 PolicyReport, `openreports` is
openreports.io/v1alpha1 Report. The only objects audit then writes are those reports.

The upgrade preview: `--kubevirt-version R` (R not the cluster's release) assesses every VM as the cluster's
own release (its KubeVirt CR's status.observedKubeVirtVersion) and as R, and lists after the table (or under
`preview` in JSON/YAML) the VMs R would answer differently: another action (refused, unresolved, flattened),
other fields written, other causes, another domain XML. The exit status stays that of the cluster's release.
"""
from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from instancetype_webhook.cli.command import add_command
from instancetype_webhook.cli.fleet import add_selection, open_for, with_progress
from instancetype_webhook.cli.inputs import InputError, release_option


def register(subparsers: argparse._SubParsersAction) -> None:
    p = add_command(subparsers, "audit", "report what a policy would do to the stored VMs (read-only)", __doc__)
    add_selection(p)
    p.add_argument("--report", choices=("policyreport", "openreports"),
                   help="also write the results as policy reports: wgpolicyk8s.io PolicyReport or "
                        "openreports.io Report")
    p.add_argument("--report-flatten", choices=("warn", "fail"), default="warn",
                   help="the report result of a VM that would be flattened (default warn)")
    p.add_argument("--report-max-bytes", type=int, default=1_000_000,
                   help="split a namespace's report into parts of at most this many bytes (default 1000000)")
    p.add_argument("--exit-zero", action="store_true",
                   help="exit 0 even when VMs are refused, unresolved or failed (e.g. a scheduled audit whose "
                        "findings are in the reports)")
    p.set_defaults(func=run)


def _report_api(args: argparse.Namespace, session: Any) -> Any:
    """The report API to write (checked to be served), None without --report, or an exit status."""
    from instancetype_webhook.fleet.policyreport import APIS
    from instancetype_webhook.fleet.publish import ReportError, check_api

    if not args.report:
        return None
    api = APIS[args.report]
    try:
        check_api(session.client, api)
    except ReportError as exc:
        print(f"audit: {exc}", file=sys.stderr)
        return 2
    return api


def _publish(args: argparse.Namespace, session: Any, api: Any, namespace: str | None, findings: list[Any]) -> int:
    from instancetype_webhook.fleet.policyreport import reports
    from instancetype_webhook.fleet.publish import ReportError, publish, table

    wanted = reports(api, [f.reference() for f in findings], args.policy, int(time.time()), args.report_flatten,
                     args.report_max_bytes)
    try:
        done = publish(session.client, api, wanted, namespace)
    except ReportError as exc:
        print(f"audit: {exc}", file=sys.stderr)
        return 2
    sys.stdout.flush()
    print(table(api, done), end="", file=sys.stderr)
    return 0


def _assess(args: argparse.Namespace, session: Any, namespace: str | None, shard: Any,
            target: Any) -> tuple[list[Any], Any] | None:
    """(findings, the upgrade preview or None) for the selection; None when the cluster could not be read."""
    from instancetype_webhook.fleet.audit import audit
    from instancetype_webhook.fleet.preview import preview

    if target is None:
        findings = with_progress(args, "audit", session, lambda total, tick: audit(
            session.client, session.ctx, namespace, shard, total, tick), "audit: listing VMs: ")
        return None if findings is None else (findings, None)
    then = session.source.configuration.settings_as(target)
    previewed = with_progress(args, "audit", session, lambda total, tick: preview(
        session.client, session.ctx, then, namespace, shard, total, tick), "audit: listing VMs: ")
    return None if previewed is None else (previewed.findings, previewed)


def run(args: argparse.Namespace) -> int:
    from instancetype_webhook.fleet.report import audit_document, write_document, write_preview, write_table

    if args.report and args.shard:
        print("audit: --report covers whole namespaces; it cannot be combined with --shard", file=sys.stderr)
        return 2
    if args.report_max_bytes < 65536:
        print("audit: --report-max-bytes must be at least 65536", file=sys.stderr)
        return 2
    try:
        target = release_option(args.kubevirt_version, default="auto")  # the flag, else the variable
    except InputError as exc:
        print(f"audit: {exc}", file=sys.stderr)
        return 2
    if target is not None:  # the preview: the session answers as the cluster's own release
        args = argparse.Namespace(**{**vars(args), "kubevirt_version": "auto"})
    opened = open_for(args, "audit")
    if isinstance(opened, int):
        return opened
    session, namespace, shard = opened
    api = _report_api(args, session)
    if isinstance(api, int):
        session.close()
        return api
    assessed = _assess(args, session, namespace, shard, target)
    if assessed is None:
        return 2
    findings, previewed = assessed
    if args.output == "table":
        write_table(findings, sys.stdout, f"policy {args.policy}")
        if previewed is not None:
            write_preview(previewed, sys.stdout)
    else:
        document = audit_document(args.policy, findings)
        if previewed is not None:
            document["preview"] = previewed.to_dict()
        write_document(document, args.output, sys.stdout)
    if api is not None and _publish(args, session, api, namespace, findings):
        return 2
    if args.exit_zero:
        return 0
    return 1 if any(f.action in ("refuse", "unresolved", "failed") for f in findings) else 0
