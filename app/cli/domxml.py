"""`instancetype-webhook domxml`: the libvirt domain XML virt-launcher would define for a VM, offline.

    instancetype-webhook domxml -f VM.yaml [-f objects.yaml ...] [--catalog DIR] [--uid UID]

The VirtualMachine is expanded first (its instance type and preference, from the -f objects on top of the
bundled common-instancetypes catalogue or --catalog DIR), turned into the VMI virt-controller would create,
defaulted like virt-api does and converted like virt-launcher's converter (default launcher context:
see app/domxml/context.py). A VirtualMachineInstance may be given instead of a VM; it is converted as is.

Exit status: 0 XML printed, 1 rejected (expansion conflict/missing reference, or the converter refuses
the VMI), 2 unreadable input.
"""
from __future__ import annotations

import argparse
import copy
import sys
from typing import Any, TextIO

from app.cli.expand import print_rejection
from app.cli.inputs import InputError, build_source, read_single
from app.domxml import DomainError, render_domain, vmi_from_vm
from app.kubevirt.causes import ExpandError
from app.kubevirt.expand import expand
from app.kubevirt.settings import DEFAULT_SETTINGS
from app.sources.catalog import CatalogError

SUBJECT_KINDS = ("VirtualMachine", "VirtualMachineInstance")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "domxml",
        help="print the libvirt domain XML a VirtualMachine (or VMI) would get (offline)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("-f", "--filename", action="append", required=True, metavar="FILE",
                   help="a VM or VMI and/or reference objects (YAML or JSON, multi-document); '-' reads stdin")
    p.add_argument("--catalog", metavar="DIR", help="use the manifests under DIR instead of the bundled catalogue")
    p.add_argument("--uid", help="the VMI uid to use in socket paths (default: stable, derived from the name)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace, stdout: TextIO | None = None, stderr: TextIO | None = None,
        stdin: TextIO | None = None) -> int:
    out, err = stdout or sys.stdout, stderr or sys.stderr
    try:
        subject, objects = read_single(args.filename, stdin or sys.stdin, SUBJECT_KINDS)
        if subject.get("kind") == "VirtualMachineInstance":
            vmi = subject
        else:
            vmi = vmi_from_vm(expand_like_virt_controller(subject, build_source(objects, args.catalog, subject)),
                              uid=args.uid)
    except (InputError, CatalogError) as exc:
        print(f"error: {exc}", file=err)
        return 2
    except ExpandError as exc:
        print_rejection(exc, err)
        return 1
    except DomainError as exc:
        print(f"rejected: {exc}", file=err)
        return 1
    try:
        xml = render_domain(vmi)
    except DomainError as exc:
        print(f"rejected: {exc}", file=err)
        return 1
    try:
        out.write(xml)
        out.flush()
    except BrokenPipeError:
        return 0
    return 0


def expand_like_virt_controller(vm: dict[str, Any], source: Any) -> dict[str, Any]:
    """The flat VM, with the input device virt-controller auto-attaches *before* it applies the preference
    (so preferredInputBus/preferredInputType reach it, as they do on a real cluster)."""
    flat = expand(vm, source, DEFAULT_SETTINGS)
    devices = (((flat.get("spec") or {}).get("template") or {}).get("spec") or {}).get("domain", {}).get("devices") or {}
    if not devices.get("autoattachInputDevice") or devices.get("inputs") or flat is vm:
        return flat
    with_input = copy.deepcopy(vm)
    template_devices = with_input["spec"]["template"]["spec"].setdefault("domain", {}).setdefault("devices", {})
    template_devices["inputs"] = [{"name": "default-0"}]
    return expand(with_input, source, DEFAULT_SETTINGS)
