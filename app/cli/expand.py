"""`instancetype-webhook expand`: flatten a VirtualMachine offline, like `virtctl expand` without a cluster.

    instancetype-webhook expand -f VM.yaml [-f objects.yaml ...] [--catalog DIR] [-o yaml|json] [--diff]

Inputs are files or stdin (`-f -`), multi-document YAML or JSON. The document of kind VirtualMachine is
the VM; instance types, preferences and ControllerRevisions are reference objects, and so are the
PersistentVolumeClaims, DataVolumes, DataSources and VolumeSnapshots that `inferFromVolume` reads (the VM
first goes through the VM mutating webhook's instancetype stage, as in a cluster). The bundled
common-instancetypes catalogue is consulted too; objects given with -f take precedence, and
--catalog DIR replaces the bundled catalogue.

Exit status: 0 expanded (the flat VM, or with --diff the RFC 6902 patch and a unified diff),
1 rejected (the causes are printed), 2 unreadable input.
"""
from __future__ import annotations

import argparse
import difflib
import sys
from typing import Any, TextIO

import jsonpatch
import orjson
import yaml

from app.cli.inputs import InputError, build_source, read_subject
from app.kubevirt.causes import ExpandError, Verdict
from app.kubevirt.expand import expand
from app.kubevirt.mutator import mutate_vm
from app.sources.catalog import CatalogError

VM_KIND = "VirtualMachine"
RED, GREEN, CYAN, RESET = "\033[31m", "\033[32m", "\033[36m", "\033[0m"


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "expand",
        help="flatten a VirtualMachine with its instance type and preference (offline)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("-f", "--filename", action="append", required=True, metavar="FILE",
                   help="a VM and/or reference objects (YAML or JSON, multi-document); '-' reads stdin")
    p.add_argument("--catalog", metavar="DIR", help="use the manifests under DIR instead of the bundled catalogue")
    p.add_argument("-o", "--output", choices=("yaml", "json"), default="yaml", help="output format (default yaml)")
    p.add_argument("--diff", action="store_true", help="print the RFC 6902 patch and a unified diff instead")
    p.add_argument("--provenance", action="store_true",
                   help="add the webhook's expanded-from annotation (what `resize` needs to take the old size out)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    out, err = stdout or sys.stdout, stderr or sys.stderr
    try:
        vm, inputs = read_subject(args.filename, sys.stdin, (VM_KIND,))
        source = build_source(inputs.reference_objects, args.catalog, vm)
        settings = inputs.cluster_settings()
    except (InputError, CatalogError) as exc:
        print(f"error: {exc}", file=err)
        return 2
    stage = mutate_vm(vm, None, source, settings)  # as virt-api's VM mutator: matchers, inferFromVolume, ...
    if stage.vm is None:
        print_verdict(stage.verdict, err)
        return 1
    for warning in stage.verdict.warnings:
        print(f"warning: {warning}", file=err)
    try:
        flat = expand(stage.vm, source, settings)
    except ExpandError as exc:
        print_rejection(exc, err)
        return 1
    if getattr(args, "provenance", False):
        flat = with_provenance(vm, flat, source, settings)
    try:
        if args.diff:
            print_diff(vm, flat, out, colour=out.isatty())
        else:
            out.write(render(flat, args.output))
        out.flush()
    except BrokenPipeError:  # e.g. piped into `head`
        return 0
    return 0


def with_provenance(vm: dict[str, Any], flat: dict[str, Any], source: Any, settings: Any) -> dict[str, Any]:
    """`flat` as the webhook stores it: with the provenance annotation (and its imprint)."""
    from app.server.context import ReviewContext
    from app.server.mutate import finish_flat

    namespace = (vm.get("metadata") or {}).get("namespace") or "default"
    return finish_flat(vm, flat, namespace, ReviewContext(source=source, policy="expand", cluster=settings))


def render(vm: dict[str, Any], fmt: str) -> str:
    if fmt == "json":
        return orjson.dumps(vm, option=orjson.OPT_INDENT_2).decode() + "\n"
    return yaml.safe_dump(vm, sort_keys=False, default_flow_style=False)


def print_verdict(verdict: Verdict, err: TextIO) -> None:
    """A denial of the VM mutating webhook's instancetype stage (matcher checks, inferFromVolume)."""
    print(f"rejected (mutate, {verdict.code}): {verdict.message}", file=err)
    for cause in verdict.causes:
        field = f" {cause.field}" if cause.field else ""
        print(f"  - {cause.reason}{field}: {cause.message}", file=err)


def print_rejection(exc: ExpandError, err: TextIO) -> None:
    print(f"rejected ({exc.kind}): {exc.message}", file=err)
    for cause in exc.causes:
        field = f" {cause.field}" if cause.field else ""
        print(f"  - {cause.reason}{field}: {cause.message}", file=err)


def print_diff(before: dict[str, Any], after: dict[str, Any], out: TextIO, colour: bool,
               names: tuple[str, str] = ("submitted", "expanded")) -> None:
    patch = jsonpatch.make_patch(before, after).patch
    out.write("# RFC 6902 patch\n")
    out.write(orjson.dumps(patch, option=orjson.OPT_INDENT_2).decode() + "\n")
    out.write("# unified diff\n")
    lines = difflib.unified_diff(
        render(before, "yaml").splitlines(keepends=True),
        render(after, "yaml").splitlines(keepends=True),
        fromfile=names[0],
        tofile=names[1],
    )
    for line in lines:
        out.write(_colour(line) if colour else line)


def _colour(line: str) -> str:
    if line.startswith(("+++", "---")):
        return line
    if line.startswith("+"):
        return f"{GREEN}{line.rstrip(chr(10))}{RESET}\n"
    if line.startswith("-"):
        return f"{RED}{line.rstrip(chr(10))}{RESET}\n"
    if line.startswith("@@"):
        return f"{CYAN}{line.rstrip(chr(10))}{RESET}\n"
    return line
