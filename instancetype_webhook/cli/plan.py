"""`instancetype-webhook plan`: before a running VM is edited, say what KubeVirt will do with the change:
hot-plug it into the running VM (live), leave it for the next restart (RestartRequired, with upstream's
message), or refuse the update.

    offline:      instancetype-webhook plan -f running-vm.yaml [-f objects.yaml ...]
                      (--new NEW.yaml | --instancetype NAME [--preference NAME])
    on a cluster: instancetype-webhook plan VM_NAME [-n NS] [--kubeconfig FILE | --in-cluster]
                      (--new NEW.yaml | --instancetype NAME [--preference NAME])

Offline, the files hold the VM as it was started (a manifest, or the stored VM with its status), and may
hold its VirtualMachineInstance (else the VMI is derived as virt-controller and virt-api create it), the
instance types, preferences and ControllerRevisions (on top of the bundled common-instancetypes) and a
KubeVirt CR (the cluster configuration: vmRolloutStrategy, liveUpdateConfiguration, ...). On a cluster
the VM, its VMI, its ControllerRevisions and the KubeVirt CR are read with GET/LIST.

The edit is a manifest (`--new`) or a new size for the running VM (`--instancetype`, `--preference`:
NAME for a cluster-wide kind, or KIND/NAME). Under `--policy expand|expandAll` the plan is for the flat
VM this webhook would store (as `serve --policy` flattens it).

Output: a table (field, now, after, live / restart / refused / retry, why), a summary and notes (e.g. a
derived VMI, a lookup the webhooks ignore); `-o json` gives the same as one object.

Exit status: 0 everything goes live (or nothing changes), 1 the update is refused, 2 bad input or the
plan cannot be made (VM not running, no VMI or revision, an instance type that does not exist),
4 a transient error (a hotplug or migration in progress: virt-controller retries), 5 a restart is needed.
(3 is every command's "the cluster did not answer in time".)
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from instancetype_webhook.admission.policy import Policy
from instancetype_webhook.cli import compare
from instancetype_webhook.cli.command import add_command
from instancetype_webhook.cli.inputs import (
    InputError,
    Inputs,
    add_recursive_argument,
    add_release_argument,
    build_source,
    read_inputs,
    release_note,
    release_option,
)
from instancetype_webhook.cli.strict import add_strict_argument, check_fields
from instancetype_webhook.kubevirt.configuration import (
    DEFAULT_SETTINGS,
    ClusterSettings,
    settings_from_kubevirt,
    with_release,
)
from instancetype_webhook.kubevirt.liveupdate import Plan, Started, StartError, plan_update, start_vm
from instancetype_webhook.kubevirt.liveupdate.revisions import LayeredSource
from instancetype_webhook.kubevirt.liveupdate.rows import Row, outcome_rows, show
from instancetype_webhook.kubevirt.prune import prune_object
from instancetype_webhook.kubevirt.releases import from_kubevirt
from instancetype_webhook.kubevirt.resize import named
from instancetype_webhook.kubevirt.source import InMemorySource, Source
from instancetype_webhook.sources.catalog import CatalogError

# 3 is not plan's own: every command exits 3 when a live source cannot answer (cli.UNAVAILABLE)
EXIT_LIVE, EXIT_REFUSED, EXIT_INPUT, EXIT_RETRY, EXIT_RESTART = 0, 1, 2, 4, 5
POLICIES = ("reference", "expand", "expandAll")
_MISSING_OBJECT = ("FailedFindInstancetype", "FailedFindPreference")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = add_command(subparsers, "plan", "say whether an edit of a running VM goes live, needs a restart or is refused",
                    __doc__)
    p.add_argument("name", nargs="?", metavar="VM_NAME", 
                   help="the running VM in the cluster (with --kubeconfig/--in-cluster)")
    p.add_argument("-f", "--filename", action="append", default=[], metavar="FILE",
                   help="offline: the VM as started, its VMI, reference objects, a KubeVirt CR ('-' reads stdin)")
    add_recursive_argument(p)
    p.add_argument("--new", metavar="FILE", help="the edited VM (a manifest)")
    p.add_argument("--instancetype", metavar="[KIND/]NAME", help="the new instance type of the running VM")
    p.add_argument("--preference", metavar="[KIND/]NAME", help="the new preference of the running VM")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--kubeconfig", help="read the VM from this cluster (default: $KUBECONFIG or ~/.kube/config)")
    src.add_argument("--in-cluster", action="store_true", help="read the VM with the pod's service account")
    p.add_argument("-n", "--namespace", help="the VM's namespace on the cluster (default: the kubeconfig context's)")
    p.add_argument("--catalog", metavar="DIR", help="offline: the manifests under DIR instead of the bundled catalogue")
    p.add_argument("--policy", choices=POLICIES, default="reference",
                   help="this webhook's policy: under expand/expandAll the flat VM it would store is planned")
    add_release_argument(p, default="", where=" (on a cluster: the default)")
    add_strict_argument(p)
    p.add_argument("-o", "--output", choices=("table", "json"), default="table")
    compare.add_compare_argument(p)
    p.set_defaults(func=run)


class PlanInputError(Exception):
    """Why the plan cannot be made (one line)."""


def run(args: argparse.Namespace, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    if compare.wanted(args):  # the what-if: as --kubevirt-version and as R2, only what differs
        return compare.run_compare("plan", run, args, stdout, stderr)
    out, err = stdout or sys.stdout, stderr or sys.stderr
    try:
        started, new_vm, settings, notes = _gather(args, err)
        new_vm = _under_policy(args.policy, started, new_vm, settings)
        plan = plan_update(started, new_vm, settings)
    except (PlanInputError, InputError, CatalogError, StartError) as exc:
        print(f"plan: {exc}", file=err)
        return EXIT_INPUT
    if plan.sync_error is not None and plan.sync_error.reason in _MISSING_OBJECT:
        print(f"plan: {plan.sync_error.message} (virt-controller would report {plan.sync_error.reason} "
              "and change nothing)", file=err)
        return EXIT_INPUT
    notes = [*(f"note: {note}" for note in notes), *(f"warning: {w}" for w in plan.admission.warnings)]
    matchers = tuple(_matcher_rows(started.stored_vm, new_vm))
    rows = outcome_rows(plan, plan.before or {}, plan.after, matchers) if plan.after is not None and plan.before \
        is not None else outcome_rows(plan, {}, {}, matchers)
    code = exit_code(plan)
    try:
        if args.output == "json":
            out.write(json.dumps({**plan_json(started, plan, rows, code), "notes": notes}, indent=2) + "\n")
        else:
            out.write(render_table(started, plan, rows) + "".join(f"{note}\n" for note in notes))
        out.flush()
    except BrokenPipeError:
        pass
    return code


def exit_code(plan: Plan) -> int:
    if plan.refused:
        return EXIT_REFUSED
    if plan.sync_error is not None:
        return EXIT_RETRY
    return EXIT_RESTART if plan.restart_required is not None else EXIT_LIVE


# -- inputs --------------------------------------------------------------------------------------------


def _edited(args: argparse.Namespace, running_vm: dict[str, Any]) -> dict[str, Any]:
    if args.new and (args.instancetype or args.preference):
        raise PlanInputError("give either --new FILE or --instancetype/--preference, not both")
    if args.new:
        vms = read_inputs([args.new], sys.stdin).vms
        if len(vms) != 1:
            raise PlanInputError(f"--new {args.new}: {len(vms) or 'no'} VirtualMachine(s); give exactly one")
        return vms[0]
    if args.instancetype or args.preference:
        return named(running_vm, args.instancetype, args.preference)
    raise PlanInputError("say what changes: --new FILE, or --instancetype NAME and/or --preference NAME")


def _gather(args: argparse.Namespace, err: TextIO) -> tuple[Started, dict[str, Any], ClusterSettings, list[str]]:
    if args.name or args.kubeconfig or args.in_cluster:
        if args.filename:
            raise PlanInputError("give either -f FILE (offline) or a VM_NAME on a cluster, not both")
        if not args.name:
            raise PlanInputError("name the running VM: plan VM_NAME --kubeconfig FILE ...")
        return _from_cluster(args)
    if not args.filename:
        raise PlanInputError("give the running VM: -f FILE (offline) or VM_NAME with --kubeconfig/--in-cluster")
    return _from_files(args, err)


def _from_files(args: argparse.Namespace, err: TextIO) -> tuple[Started, dict[str, Any], ClusterSettings, list[str]]:
    inputs = read_inputs(args.filename, sys.stdin, args.recursive).as_release(args.kubevirt_version)
    check_fields(inputs, args.strict, err)
    if len(inputs.vms) != 1:
        raise PlanInputError(f"{len(inputs.vms) or 'no'} VirtualMachine(s) in {', '.join(args.filename)}; "
                             "give exactly one (the VM as started)")
    if len(inputs.vmis) > 1:
        raise PlanInputError(f"{len(inputs.vmis)} VirtualMachineInstances; give at most one (the running VMI)")
    vm = inputs.vms[0]
    settings = inputs.cluster_settings()
    source = build_source(inputs.reference_objects, args.catalog, vm, inputs.release)
    if args.policy != "reference":  # the VM as this webhook stored it at creation (flat)
        vm = _stored_by_webhook(args.policy, vm, None, source, settings)
    edited = _edited(args, vm)
    if args.new:
        check_fields(Inputs([(args.new, [edited])], inputs.release), args.strict, err)
    new_vm = prune_object(edited, inputs.release)
    _check_same_vm(vm, new_vm)
    started = start_vm(vm, source, settings)
    notes = [note for note in [release_note(inputs.release)] if note]
    if inputs.vmis:
        started = Started(started.stored_vm, started.start_spec, started.source, inputs.vmis[0])
    else:
        notes.append("no VirtualMachineInstance given: the running VMI is derived from the VM as virt-controller "
                     "starts it")
    return started, new_vm, settings, notes


def _check_same_vm(vm: dict[str, Any], new_vm: dict[str, Any]) -> None:
    def ident(obj: dict[str, Any]) -> tuple[str, str]:
        meta = obj.get("metadata")
        if not isinstance(meta, dict):
            meta = {}
        return str(meta.get("namespace") or "default"), str(meta.get("name") or "")

    if ident(vm) != ident(new_vm):
        raise PlanInputError("the edited VM is {}/{}, the running one {}/{}: an update keeps the name and "
                             "namespace".format(*ident(new_vm), *ident(vm)))


def _from_cluster(args: argparse.Namespace) -> tuple[Started, dict[str, Any], ClusterSettings, list[str]]:
    from instancetype_webhook.sources.kube import VMClient
    from instancetype_webhook.sources.running import RunningError, read_running

    try:
        client, context_namespace = VMClient.from_config(args.kubeconfig, args.in_cluster)
    except Exception as exc:  # ConfigException, unreadable or malformed files
        where = "in-cluster configuration" if args.in_cluster else f"kubeconfig {args.kubeconfig or '(default)'}"
        raise PlanInputError(f"cannot load the {where}: {exc}") from exc
    namespace = args.namespace or context_namespace
    extra = [_edited(args, {"metadata": {"name": args.name, "namespace": namespace}, "spec": {}})] if args.new else []
    try:
        running = read_running(client, namespace, args.name, extra)
    except RunningError as exc:
        raise PlanInputError(str(exc)) from exc
    release = release_option(args.kubevirt_version, default="auto") or from_kubevirt(running.kubevirt)
    settings = (settings_from_kubevirt(running.kubevirt, release=release) if running.kubevirt
                else with_release(DEFAULT_SETTINGS, release))
    if args.instancetype or args.preference:  # the objects the new size names
        from instancetype_webhook.sources.running import referenced_objects

        resized = named(running.vm, args.instancetype, args.preference)
        running.objects += referenced_objects(client, [resized], namespace)
    base = InMemorySource(running.objects, default_namespace=namespace)
    started = Started(running.vm, running.start_spec, LayeredSource(base), running.vmi)
    new_vm = prune_object(_edited(args, running.vm), release)
    _check_same_vm(running.vm, new_vm)
    return started, new_vm, settings, [*running.notes, *[n for n in [release_note(release)] if n]]


def _under_policy(policy: Policy, started: Started, new_vm: dict[str, Any],
                  settings: ClusterSettings) -> dict[str, Any]:
    """Under expand/expandAll, the VM this webhook's /mutate would store for the UPDATE (flat)."""
    if policy == "reference":
        return new_vm
    return _stored_by_webhook(policy, new_vm, started.stored_vm, started.source, settings)


def _stored_by_webhook(policy: Policy, vm: dict[str, Any], old_vm: dict[str, Any] | None, source: Source,
                       settings: ClusterSettings) -> dict[str, Any]:
    """The VM this webhook's /mutate stores for a CREATE (`old_vm` None) or an UPDATE under `policy`."""
    from instancetype_webhook.admission.context import ReviewContext
    from instancetype_webhook.admission.mutate import answer_vm

    namespace = str((vm.get("metadata") or {}).get("namespace") or "default")
    ctx = ReviewContext(source=source, policy=policy, cluster=settings)
    operation = "UPDATE" if old_vm is not None else "CREATE"
    answer = answer_vm(vm, old_vm, operation, namespace, ctx)
    if answer.action == "deny":
        raise PlanInputError(f"this webhook refuses the {operation} under policy {policy}: {answer.verdict.message}")
    return answer.flat if answer.flat is not None else vm


# -- output --------------------------------------------------------------------------------------------


def _matcher_rows(old: dict[str, Any], new: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    rows = []
    for key in ("instancetype", "preference"):
        before = ((old.get("spec") or {}).get(key) or {}).get("name")
        after = ((new.get("spec") or {}).get(key) or {}).get("name")
        if before != after:
            rows.append((key, before, after))
    return rows


def _identity(started: Started) -> str:
    meta = started.stored_vm.get("metadata") or {}
    return f"{meta.get('namespace') or 'default'}/{meta.get('name') or ''}"


def summary(plan: Plan) -> list[str]:
    if plan.refused:
        return [f"admission: refused ({plan.admission.code}): {plan.admission.message}"]
    lines = ["admission: allowed",
             f"RestartRequired: {plan.restart_required or 'no'}",
             "VMI patch: " + (", ".join(sorted(plan.vmi_patched)) or "none")]
    if plan.conditions:
        lines.append("VMI conditions: " + ", ".join(plan.conditions) + " (a live migration carries the change)")
    if plan.sync_error is not None:
        lines.append(f"sync error (retried): {plan.sync_error.reason}: {plan.sync_error.message}")
    return lines


def render_table(started: Started, plan: Plan, rows: list[Row]) -> str:
    head = ("FIELD", "NOW", "AFTER", "OUTCOME", "WHY")
    cells = [(r.field, show(r.now), show(r.after), r.outcome, r.why) for r in rows]
    lines = [f"VirtualMachine {_identity(started)}"]
    if cells:
        widths = [max(len(str(c[i])) for c in [head, *cells]) for i in range(4)]
        for cell in [head, *cells]:
            lines.append("  ".join(str(cell[i]).ljust(widths[i]) for i in range(4)) + "  " + cell[4])
    else:
        lines.append("no field of the expanded template changes")
    return "\n".join([*lines, "", *summary(plan)]) + "\n"


def plan_json(started: Started, plan: Plan, rows: list[Row], code: int) -> dict[str, Any]:
    admission: dict[str, Any] = {"allowed": plan.admission.allowed}
    if plan.refused:
        admission.update(message=plan.admission.message, code=plan.admission.code,
                         causes=[c.to_dict() for c in plan.admission.causes])
    return {
        "vm": _identity(started),
        "admission": admission,
        "restartRequired": plan.restart_required,
        "vmiPatched": plan.vmi_patched,
        "conditions": plan.conditions,
        "syncError": None if plan.sync_error is None else {"reason": plan.sync_error.reason,
                                                            "message": plan.sync_error.message},
        "fields": [r.to_dict() for r in rows],
        "exitCode": code,
    }
