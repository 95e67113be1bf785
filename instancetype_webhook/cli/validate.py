"""`instancetype-webhook validate -f VM.yaml [-f objects.yaml ...] [--old OLD.yaml] [--catalog DIR] [-o text|json]`.

Each VirtualMachine in the input goes through what the admission webhooks would check about instance
types and preferences: the mutating webhook's instancetype stage (matcher checks, inferFromVolume from the
PVCs, DataVolumes, DataSources and VolumeSnapshots among the inputs; with --old FILE the VM of the same
name is an UPDATE of that stored VM), then the instance type / preference stage of the validating webhook
(`instancetype_webhook.kubevirt.vm_webhook.validate_vm`) on the VM the mutating stage leaves. A KubeVirt object
among the inputs is the cluster configuration. When the input holds no VirtualMachine, the instance type and
preference objects of the first file are admitted instead (`admit_object`). Exit 0 when everything is allowed,
1 when anything is rejected, 2 on unreadable input.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from instancetype_webhook.cli import compare
from instancetype_webhook.cli.inputs import InputError, add_input_arguments, announce, read_request
from instancetype_webhook.cli.strict import add_strict_argument, check_fields
from instancetype_webhook.kubevirt.causes import Verdict
from instancetype_webhook.kubevirt.configuration import DEFAULT_SETTINGS, ClusterSettings
from instancetype_webhook.kubevirt.mutator import mutate_vm
from instancetype_webhook.kubevirt.vm_webhook import admit_object, validate_vm
from instancetype_webhook.sources.catalog import CatalogError, is_reference_object, is_volume_object


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "validate",
        help="check a VM (or an instance type / preference) the way the admission webhooks would",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
    )
    add_input_arguments(parser, "the VM first, then any referenced objects", dest="files")
    add_strict_argument(parser)
    parser.add_argument("-o", "--output", choices=("text", "json"), default="text", help="output format (default text)")
    compare.add_compare_argument(parser)
    parser.set_defaults(func=run)


def _name(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    name = meta.get("name") or "<unnamed>"
    kind = obj.get("kind", "?")
    return f"{kind}/{meta['namespace']}/{name}" if meta.get("namespace") else f"{kind}/{name}"


def check_vm(vm: dict[str, Any], source, settings: ClusterSettings = DEFAULT_SETTINGS,
             old_vm: dict[str, Any] | None = None) -> Verdict:
    """The VM mutating webhook's instancetype stage (an UPDATE when `old_vm` is given), then the validator
    on the VM as that stage leaves it (what the API server hands the validating webhook)."""
    stage = mutate_vm(vm, old_vm, source, settings)
    if stage.vm is None:
        return stage.verdict
    verdict = validate_vm(stage.vm, source, settings)
    verdict.warnings = [*stage.verdict.warnings, *verdict.warnings]
    return verdict


def subjects(inputs) -> list[tuple[dict[str, Any], str]]:
    """(object, "vm" | "object") pairs to check."""
    if inputs.vms:
        return [(vm, "vm") for vm in inputs.vms]
    _, first = inputs.files[0]
    return [(obj, "object") for obj in first
            if is_reference_object(obj) and obj.get("kind") != "ControllerRevision" and not is_volume_object(obj)]


def render_text(name: str, verdict: Verdict, out: TextIO) -> None:
    if verdict.allowed:
        out.write(f"{name}: allowed\n")
    else:
        out.write(f"{name}: rejected ({verdict.code}): {verdict.message}\n")
        for cause in verdict.causes:
            out.write(f"  - {cause.field or '<no field>'}: {cause.message} [{cause.reason}]\n")
    for warning in verdict.warnings:
        out.write(f"  warning: {warning}\n")


def verdict_json(name: str, verdict: Verdict) -> dict[str, Any]:
    answer: dict[str, Any] = {"object": name, "allowed": verdict.allowed}
    if not verdict.allowed:
        status: dict[str, Any] = {"code": verdict.code, "message": verdict.message}
        if verdict.code == 422:
            status["reason"] = "Invalid"
            status["details"] = {"causes": [cause.to_dict() for cause in verdict.causes]}
        answer["status"] = status
    if verdict.warnings:
        answer["warnings"] = verdict.warnings
    return answer


def run(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None,
        stdin: TextIO | None = None) -> int:
    if compare.wanted(args):  # the what-if: as --kubevirt-version and as R2, only what differs
        return compare.run_compare("validate", run, args, out, err)
    out, err = out or sys.stdout, err or sys.stderr
    try:
        request = read_request(args.files, stdin, args.catalog, getattr(args, "old", None),
                               getattr(args, "kubevirt_version", "main"), recursive=getattr(args, "recursive", False))
        announce(request.inputs.release, err)
        check_fields(request.inputs, getattr(args, "strict", False), err)
        todo = subjects(request.inputs)
        if not todo:
            raise InputError(f"{request.inputs.files[0][0]}: "
                             "no VirtualMachine, instance type or preference to validate: it holds "
                             f"{request.inputs.holds()}")
        request.check_old(request.inputs.vms)
    except (InputError, CatalogError) as exc:
        err.write(f"error: {exc}\n")
        return 2
    results = [(_name(obj), check_vm(obj, request.source, request.settings, request.old_for(obj)) if what == "vm"
                else admit_object(obj, release=request.settings.release)) for obj, what in todo]
    if args.output == "json":
        payload = [verdict_json(name, verdict) for name, verdict in results]
        out.write(json.dumps(payload[0] if len(payload) == 1 else payload, indent=2) + "\n")
    else:
        for name, verdict in results:
            render_text(name, verdict, out)
    return 0 if all(verdict.allowed for _, verdict in results) else 1
