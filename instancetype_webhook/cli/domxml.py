"""`instancetype-webhook domxml`: the libvirt domain XML virt-launcher would define for a VM, offline.

    instancetype-webhook domxml -f VM.yaml [-f objects.yaml ...] [--old OLD.yaml] [--catalog DIR] [--uid UID]
                                [--policy expand|expandAll|reference] [--preserve-guest]

The VirtualMachine is rendered as it will be stored under --policy and then started (domxml/stored.py):
`expand` (default) stores the flat VM, its instance type and preference taken from the -f objects on top
of the bundled common-instancetypes catalogue or --catalog DIR: the domain upstream KubeVirt runs for the
expanded VM (an auto-attached tablet is a USB one, as the flat VM has no preference left at start);
--preserve-guest renders the flat VM as `serve --preserve-guest` stores it (the preference's input bus
kept). `reference` keeps the references, which virt-controller applies when it starts the VM.
The VMI virt-controller creates is defaulted like virt-api does and
converted like virt-launcher's converter on a node of the VM's architecture (instancetype_webhook/domxml/context.py). A
KubeVirt object among the -f documents is the cluster configuration (SMBIOS, CPU model, live-update
maxima, default architecture, ...). Like the API server, the VM first goes through the VM mutating
webhook's instancetype stage (matcher checks, inferFromVolume from the PVCs, DataVolumes, DataSources and
VolumeSnapshots among the -f documents; --old FILE makes it an UPDATE of that stored VM). A
VirtualMachineInstance may be given instead of a VM; it is converted as is.

Exit status: 0 XML printed, 1 rejected (by the mutating webhook, an expansion conflict/missing reference,
or the converter refuses the VMI), 2 unreadable input.
"""
from __future__ import annotations

import argparse
import sys
from typing import TextIO

from instancetype_webhook.cli import compare
from instancetype_webhook.cli.command import add_command
from instancetype_webhook.cli.expand import print_rejection
from instancetype_webhook.cli.inputs import (
    InputError,
    MutationDenied,
    add_input_arguments,
    announce,
    print_denial,
    read_request,
)
from instancetype_webhook.cli.strict import add_strict_argument, check_fields
from instancetype_webhook.domxml import DomainError, render_domain
from instancetype_webhook.domxml.cluster import domain_config_from_settings
from instancetype_webhook.domxml.stored import POLICIES, render_stored_vm
from instancetype_webhook.kubevirt.causes import ExpandError
from instancetype_webhook.sources.catalog import CatalogError

SUBJECT_KINDS = ("VirtualMachine", "VirtualMachineInstance")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = add_command(subparsers, "domxml", "print the libvirt domain XML a VirtualMachine (or VMI) would get (offline)",
                    __doc__)
    add_input_arguments(p, "a VM or VMI and/or reference objects")
    add_strict_argument(p)
    p.add_argument("--uid", help="the VMI uid to use in socket paths (default: stable, derived from the name)")
    p.add_argument("--policy", choices=POLICIES, default="expand",
                   help="how the VM is stored before it starts: flat (default) or with its references")
    p.add_argument("--preserve-guest", action="store_true",
                   help="the flat VM keeps the devices the referencing VM gets at start (serve --preserve-guest)")
    compare.add_compare_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace, stdout: TextIO | None = None, stderr: TextIO | None = None,
        stdin: TextIO | None = None) -> int:
    if compare.wanted(args):  # the what-if: as --kubevirt-version and as R2, only what differs
        return compare.run_compare("domxml", run, args, stdout, stderr)
    out, err = stdout or sys.stdout, stderr or sys.stderr
    try:
        request = read_request(args.filename, stdin or sys.stdin, args.catalog, getattr(args, "old", None),
                               getattr(args, "kubevirt_version", "main"), recursive=getattr(args, "recursive", False))
        announce(request.inputs.release, err)
        check_fields(request.inputs, getattr(args, "strict", False), err)
        subject = request.subject(SUBJECT_KINDS)
        config = domain_config_from_settings(request.settings)
        if subject.get("kind") == "VirtualMachineInstance":
            xml = render_domain(subject, config=config)
        else:
            xml = render_stored_vm(request.mutate(subject, err), request.source, args.policy, config, uid=args.uid,
                                   preserve_guest=args.preserve_guest)
    except (InputError, CatalogError) as exc:
        print(f"error: {exc}", file=err)
        return 2
    except MutationDenied as exc:
        print_denial(exc.verdict, err)
        return 1
    except ExpandError as exc:
        print_rejection(exc, err)
        return 1
    except DomainError as exc:
        print(f"rejected: {exc}", file=err)
        return 1
    try:
        out.write(xml)
        out.flush()
    except BrokenPipeError:
        return 0
    return 0

