"""`instancetype-webhook expand`: flatten a VirtualMachine offline, like `virtctl expand` without a cluster.

    instancetype-webhook expand -f VM.yaml [-f objects.yaml ...] [--old OLD.yaml] [--catalog DIR]
                                [-o yaml|json|name] [--diff]

Inputs are files or stdin (`-f -`), multi-document YAML or JSON. The document of kind VirtualMachine is
the VM; instance types, preferences, ControllerRevisions, PVCs, DataVolumes, DataSources and
VolumeSnapshots are reference objects, and a KubeVirt object is the cluster configuration. The bundled
common-instancetypes catalogue is consulted too; objects given with -f take precedence, and
--catalog DIR replaces the bundled catalogue. Like the API server, the VM first goes through the VM
mutating webhook's instancetype stage (matcher checks, inferFromVolume; --old FILE makes it an UPDATE of
that stored VM), then it is expanded.

Exit status: 0 expanded (the flat VM, or with --diff the RFC 6902 patch and a unified diff),
1 rejected (by the mutating webhook or the expansion; the causes are printed), 2 unreadable input.
"""
from __future__ import annotations

import argparse
import difflib
import sys
from typing import Any, TextIO

import jsonpatch
import orjson
import yaml

from instancetype_webhook.cli import compare
from instancetype_webhook.cli.command import add_command
from instancetype_webhook.cli.inputs import (
    InputError,
    MutationDenied,
    add_input_arguments,
    announce,
    print_denial,
    read_request,
)
from instancetype_webhook.cli.output import resource_name, use_colour
from instancetype_webhook.cli.strict import add_strict_argument, check_fields
from instancetype_webhook.kubevirt.causes import ExpandError
from instancetype_webhook.kubevirt.expand import expand_vm_spec
from instancetype_webhook.sources.catalog import CatalogError

VM_KIND = "VirtualMachine"
RED, GREEN, CYAN, RESET = "\033[31m", "\033[32m", "\033[36m", "\033[0m"


def register(subparsers: argparse._SubParsersAction) -> None:
    p = add_command(subparsers, "expand", "flatten a VirtualMachine with its instance type and preference (offline)",
                    __doc__)
    add_input_arguments(p, "a VM and/or reference objects")
    add_strict_argument(p)
    p.add_argument("-o", "--output", choices=("yaml", "json", "name"), default="yaml",
                   help="output format (default yaml; name: virtualmachine.kubevirt.io/NAME, as kubectl)")
    p.add_argument("--diff", action="store_true", help="print the RFC 6902 patch and a unified diff instead")
    p.add_argument("--provenance", action="store_true",
                   help="add the webhook's expanded-from annotation (what `resize` needs to take the old size out)")
    compare.add_compare_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    if compare.wanted(args):  # the what-if: as --kubevirt-version and as R2, only what differs
        return compare.run_compare("expand", run, args, stdout, stderr)
    out, err = stdout or sys.stdout, stderr or sys.stderr
    try:
        request = read_request(args.filename, sys.stdin, args.catalog, getattr(args, "old", None),
                               getattr(args, "kubevirt_version", "main"), recursive=getattr(args, "recursive", False))
        announce(request.inputs.release, err)
        check_fields(request.inputs, getattr(args, "strict", False), err)
        vm = request.subject((VM_KIND,))
        mutated = request.mutate(vm, err)
    except (InputError, CatalogError) as exc:
        print(f"error: {exc}", file=err)
        return 2
    except MutationDenied as exc:
        print_denial(exc.verdict, err)
        return 1
    source, settings = request.source, request.settings
    try:
        flat = expand_vm_spec(mutated, source, settings)
    except ExpandError as exc:
        print_rejection(exc, err)
        return 1
    if getattr(args, "provenance", False):
        stored = stored_by_webhook(vm, source, settings, err)
        if stored is None:
            return 1
        flat = stored
    try:
        if args.diff:
            print_diff(vm, flat, out, colour=use_colour(out))
        else:
            out.write(render(flat, args.output))
        out.flush()
    except BrokenPipeError:  # e.g. piped into `head`
        return 0
    return 0


def stored_by_webhook(vm: dict[str, Any], source: Any, settings: Any, err: TextIO) -> dict[str, Any] | None:
    """The VM as /mutate under `expandAll` stores it (with provenance and its imprint, what `resize` needs),
    or None after printing the refusal."""
    from instancetype_webhook.admission.context import ReviewContext
    from instancetype_webhook.admission.mutate import answer_vm

    namespace = (vm.get("metadata") or {}).get("namespace") or "default"
    answer = answer_vm(vm, None, "CREATE", namespace,
                       ReviewContext(source=source, policy="expandAll", cluster=settings))
    for warning in answer.verdict.warnings:
        print(f"warning: {warning}", file=err)
    if answer.action == "deny" or answer.flat is None:
        print_denial(answer.verdict, err)
        return None
    return answer.flat


def render(vm: dict[str, Any], fmt: str) -> str:
    if fmt == "name":
        return resource_name(vm) + "\n"
    if fmt == "json":
        return orjson.dumps(vm, option=orjson.OPT_INDENT_2).decode() + "\n"
    return yaml.safe_dump(vm, sort_keys=False, default_flow_style=False)


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
