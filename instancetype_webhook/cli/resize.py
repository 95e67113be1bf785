"""`instancetype-webhook resize`: give a flat VirtualMachine a new size offline, as /mutate does when an
UPDATE names an instance type (and/or preference) the stored VM did not reference.

    instancetype-webhook resize -f VM.yaml --instancetype NAME [--preference NAME] [--diff]
                                [-f objects.yaml ...] [--catalog DIR] [-o yaml|json] [--no-handwritten]

NAME is a name (a cluster-wide kind) or KIND/NAME (`VirtualMachineInstancetype/mine`). With a
provenance annotation (a VM the webhook, or `expand --provenance`, flattened) what the previous
flattening wrote is taken out first; a VM written flat by hand has the fields the instance type owns
replaced, each one named in a warning (`--no-handwritten`: refused, as upstream). The output is the
VM as the webhook would store it, with new provenance; `--diff` prints the RFC 6902 patch and a
unified diff from the VM as given.

Exit status: 0 resized, 1 refused (the causes are printed), 2 unreadable input or no name given.
"""
from __future__ import annotations

import argparse
import sys
from typing import Any, TextIO

from instancetype_webhook.cli.command import add_command
from instancetype_webhook.cli.expand import VM_KIND, print_diff, render
from instancetype_webhook.cli.inputs import InputError, add_input_arguments, announce, build_source, read_subject
from instancetype_webhook.cli.output import use_colour
from instancetype_webhook.cli.strict import add_strict_argument, check_fields
from instancetype_webhook.sources.catalog import CatalogError


def register(subparsers: argparse._SubParsersAction) -> None:
    p = add_command(subparsers, "resize", "give a flat VirtualMachine a new instance type and/or preference (offline)",
                    __doc__)
    add_input_arguments(p, "the flat VM and/or reference objects", old=False)
    add_strict_argument(p)
    p.add_argument("--instancetype", metavar="[KIND/]NAME", help="the new instance type")
    p.add_argument("--preference", metavar="[KIND/]NAME", help="the new preference")
    p.add_argument("-o", "--output", choices=("yaml", "json", "name"), default="yaml",
                   help="output format (default yaml; name: virtualmachine.kubevirt.io/NAME, as kubectl)")
    p.add_argument("--diff", action="store_true", help="print the RFC 6902 patch and a unified diff instead")
    p.add_argument("--no-handwritten", dest="handwritten", action="store_false",
                   help="refuse a VM without provenance, as upstream (the serve flag --no-resize-handwritten)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    from instancetype_webhook.admission.context import ReviewContext
    from instancetype_webhook.admission.resize import resize_named

    out, err = stdout or sys.stdout, stderr or sys.stderr
    if not (args.instancetype or args.preference) or "" in (args.instancetype, args.preference):
        print("error: name the new size: --instancetype NAME and/or --preference NAME", file=err)
        return 2
    try:
        _, given = read_subject(args.filename, sys.stdin, (VM_KIND,), recursive=getattr(args, "recursive", False))
        inputs = given.as_release(getattr(args, "kubevirt_version", "main"))
        vm = inputs.vms[0]
        source = build_source(inputs.reference_objects, args.catalog, vm, inputs.release)
        settings = inputs.cluster_settings()
        announce(inputs.release, err)
        check_fields(inputs, getattr(args, "strict", False), err)
    except (InputError, CatalogError) as exc:
        print(f"error: {exc}", file=err)
        return 2
    if not isinstance(vm.get("spec"), dict):
        print("error: the VirtualMachine has no spec", file=err)
        return 2
    namespace = (vm.get("metadata") or {}).get("namespace") or "default"
    ctx = ReviewContext(source=source, policy="expand", cluster=settings, resize_handwritten=args.handwritten)
    result, denied, stored, warnings = resize_named(vm, args.instancetype, args.preference, namespace, ctx)
    for warning in [*warnings, *(result.warnings if result else [])]:
        print(f"warning: {warning}", file=err)
    if denied is not None or stored is None:
        print_refusal(denied or result.checked.verdict, err)  # type: ignore[union-attr]  # no result: denied is set
        return 1
    try:
        if args.diff:
            print_diff(vm, stored, out, colour=use_colour(out), names=("given", "resized"))
        else:
            out.write(render(stored, args.output))
        out.flush()
    except BrokenPipeError:
        return 0
    return 0


def print_refusal(verdict: Any, err: TextIO) -> None:
    print(f"refused ({verdict.code}): {verdict.message}", file=err)
    for cause in verdict.causes:
        field = f" {cause.field}" if cause.field else ""
        print(f"  - {cause.reason}{field}: {cause.message}", file=err)
