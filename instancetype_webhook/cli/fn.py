"""`instancetype-webhook fn`: flatten or validate VirtualMachines while a GitOps pipeline renders them.

    instancetype-webhook fn < resource-list.yaml          # a KRM function (kpt, kustomize exec functions)
    instancetype-webhook fn CONFIG < resources.yaml       # a kustomize exec plugin (kubectl kustomize)

As a KRM function it reads a `config.kubernetes.io/v1` ResourceList on stdin and writes one on stdout: the
items, each VirtualMachine flattened (mode `expand`) or left as it is (mode `validate`), and what it found as
`results` (severity error or warning, the object's reference and the field). As a kustomize exec plugin
(`--enable-alpha-plugins`: what `kubectl kustomize` runs) it reads the resources as YAML documents on stdin
and the plugin's config from the file CONFIG, and writes the resources back; the errors go to stderr.

The function config (the ResourceList's `functionConfig`, or CONFIG) says, in `data` or `spec` or at its top:
`mode` (expand, the default, or validate) and `kubevirtVersion` (the release to answer as; default main).
Instance types, preferences and what `inferFromVolume` reads among the items are used as `expand` uses them,
on top of the bundled catalogue; a KubeVirt object among them is the cluster configuration.

Exit status: 0 every VM flattened or allowed, 1 a VM rejected (an error result), 2 unreadable input or config.
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from typing import Any, TextIO

import yaml

from instancetype_webhook.cli.command import add_command
from instancetype_webhook.cli.documents import DocumentError, parse
from instancetype_webhook.cli.inputs import (
    VIRTUAL_MACHINE,
    InputError,
    Inputs,
    MutationDenied,
    Request,
    build_source,
    read_text,
)
from instancetype_webhook.cli.validate import check_vm
from instancetype_webhook.kubevirt.causes import ExpandError, Verdict
from instancetype_webhook.kubevirt.expand import expand_vm_spec
from instancetype_webhook.sources.catalog import CatalogError

RESOURCE_LIST = "ResourceList"
RESOURCE_LIST_VERSIONS = ("config.kubernetes.io/v1", "config.kubernetes.io/v1alpha1")
MODES = ("expand", "validate")
WIDTH = 1 << 16  # a message stays on one line


def register(subparsers: argparse._SubParsersAction) -> None:
    p = add_command(subparsers, "fn", "a KRM function (kpt, kustomize): flatten or validate the VMs of a ResourceList",
                    __doc__)
    p.add_argument("config", nargs="?", metavar="CONFIG",
                   help="as a kustomize exec plugin: the plugin's config file (stdin is then the resources)")
    p.set_defaults(func=run)


@dataclass
class Outcome:
    """The items as the function leaves them, and what it found about them."""

    items: list[dict[str, Any]]
    results: list[dict[str, Any]] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return any(result["severity"] == "error" for result in self.results)


def run(args: argparse.Namespace, stdout: TextIO | None = None, stderr: TextIO | None = None,
        stdin: TextIO | None = None) -> int:
    out, err = stdout or sys.stdout, stderr or sys.stderr
    try:
        docs = parse(read_text("-", stdin), "<stdin>")
        if args.config is None:
            resource_list = the_resource_list(docs)
            items = resource_list.get("items") or []
            mode, version = function_config(resource_list.get("functionConfig"), "functionConfig")
        else:
            items = docs
            config = parse(read_text(args.config), args.config)
            mode, version = function_config(config[0] if len(config) == 1 else None, args.config)
        outcome = apply(items, mode, version)
    except (InputError, DocumentError, CatalogError) as exc:
        err.write(f"error: {exc}\n")
        return 2
    if args.config is None:
        answer = {"apiVersion": "config.kubernetes.io/v1", "kind": RESOURCE_LIST, "items": outcome.items}
        if outcome.results:
            answer["results"] = outcome.results
        out.write(yaml.safe_dump(answer, sort_keys=False, width=WIDTH))
    else:
        out.write(yaml.safe_dump_all(outcome.items, sort_keys=False, width=WIDTH))
        for result in outcome.results:
            err.write(f"{result['severity']}: {reference(result['resourceRef'])}: {result['message']}\n")
    return 1 if outcome.failed else 0


def the_resource_list(docs: list[dict[str, Any]]) -> dict[str, Any]:
    if len(docs) != 1 or docs[0].get("kind") != RESOURCE_LIST:
        kinds = ", ".join(str(doc.get("kind")) for doc in docs) or "nothing"
        raise InputError(f"stdin: expected one {RESOURCE_LIST} (config.kubernetes.io/v1), got {kinds}; as a "
                         "kustomize exec plugin, give the config file: fn CONFIG")
    resource_list = docs[0]
    if resource_list.get("apiVersion") not in RESOURCE_LIST_VERSIONS:
        raise InputError(f"stdin: a {RESOURCE_LIST} of apiVersion {resource_list.get('apiVersion')!r}; "
                         f"expected {RESOURCE_LIST_VERSIONS[0]}")
    items = resource_list.get("items")
    if items is not None and not (isinstance(items, list) and all(isinstance(item, dict) for item in items)):
        raise InputError(f"stdin: the {RESOURCE_LIST}'s items must be a list of objects")
    return resource_list


def function_config(config: Any, where: str) -> tuple[str, str]:
    """(mode, kubevirtVersion) from the config's `data` (a ConfigMap), `spec`, or top level."""
    if config is None:
        return "expand", "main"
    if not isinstance(config, dict):
        raise InputError(f"{where}: expected an object with mode and kubevirtVersion")
    values = next((config[key] for key in ("data", "spec") if isinstance(config.get(key), dict)), config)
    mode = str(values.get("mode") or "expand")
    if mode not in MODES:
        raise InputError(f"{where}: mode {mode!r}; expected one of {', '.join(MODES)}")
    return mode, str(values.get("kubevirtVersion") or "main")


def apply(items: list[dict[str, Any]], mode: str, version: str) -> Outcome:
    """Every VM among `items` flattened (`expand`) or checked (`validate`), the other items as they are."""
    inputs = Inputs([("items", items)]).as_release(version)
    pruned = inputs.documents
    vms = inputs.vms
    if not vms:
        return Outcome(list(items))
    source = build_source(inputs.reference_objects, None, vms[0], inputs.release)
    request = Request(inputs, None, source, inputs.cluster_settings())
    outcome = Outcome(list(items))
    for index, item in enumerate(items):
        if item.get("kind") != VIRTUAL_MACHINE:
            continue
        vm = pruned[index]
        if mode == "validate":
            report(outcome, item, check_vm(vm, source, request.settings))
            continue
        try:
            mutated = request.mutate(vm)
            outcome.items[index] = expand_vm_spec(mutated, source, request.settings)
        except MutationDenied as exc:
            report(outcome, item, exc.verdict)
        except ExpandError as exc:
            outcome.results += [result(item, "error", exc.message, cause.field) for cause in exc.causes] or [
                result(item, "error", exc.message)]
    return outcome


def report(outcome: Outcome, item: dict[str, Any], verdict: Verdict) -> None:
    if not verdict.allowed:
        outcome.results += [result(item, "error", cause.message, cause.field) for cause in verdict.causes] or [
            result(item, "error", verdict.message or "rejected")]
    outcome.results += [result(item, "warning", warning) for warning in verdict.warnings]


def result(item: dict[str, Any], severity: str, message: str, path: str | None = None) -> dict[str, Any]:
    """One entry of the ResourceList's results (the KRM functions specification's shape)."""
    found = item.get("metadata")
    meta: dict[str, Any] = found if isinstance(found, dict) else {}
    ref = {"apiVersion": item.get("apiVersion"), "kind": item.get("kind"), "name": meta.get("name")}
    if meta.get("namespace"):
        ref["namespace"] = meta["namespace"]
    entry: dict[str, Any] = {"message": message, "severity": severity, "resourceRef": ref}
    if path:
        entry["field"] = {"path": path}
    return entry


def reference(ref: dict[str, Any]) -> str:
    namespace = f"{ref['namespace']}/" if ref.get("namespace") else ""
    return f"{ref['kind']}/{namespace}{ref['name']}"
