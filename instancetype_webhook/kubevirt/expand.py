"""Expansion: a VirtualMachine plus the instance type and preference it references -> the flat VM,
exactly as upstream KubeVirt's `expand-vm-spec` (pkg/instancetype/expand) answers.

Public API (plain dicts in, plain dicts out; inputs are never mutated):

    expand(vm, source, settings=DEFAULT_SETTINGS) -> dict
        The flat VM, or raises ExpandError(kind, message, causes):
        `schema` (no `spec.template`: "Object is not a valid VirtualMachine"; or not JSON objects
        where objects belong), `notFound` (Kubernetes NotFound text), `badRequest` (unknown matcher
        kind, undecodable revision, refused default interface, mis-typed data), `conflict` (one
        FieldValueInvalid cause per path).
        A VM with neither matcher gets no instance type, preference or defaults: upstream's Expand
        returns it as is, and the endpoint prints it from Go structs, so the answer is the VM in Go's
        printed shape only (see `finish_expansion`; a new dict, the input is untouched).

    find_specs(vm, source, release) -> (instancetype_spec | None, preference_spec | None)
        Resolve both matchers (instance type first); raises ExpandError notFound/badRequest.

    apply_specs(vm, instancetype_spec, preference_spec, settings=DEFAULT_SETTINGS) -> (new_vm, causes)
        Never raises for conflicts (only ExpandError badRequest for mis-typed data or a refused
        default interface): on a copy of the VM, add the default volume disks and pod
        interface, apply the instance type (and, without conflicts, the preference) to
        `spec.template`. `causes` are the conflicts (paths rooted at `spec.template.spec`); when
        there are any, `new_vm` holds the partial application and must not be used as a result.
        No VMI defaults are applied: call `default_template_spec(new_vm, settings)` for those (the
        validating pipeline does so before checking requirements).

    default_template_spec(vm, settings) -> None
        SetDefaultVirtualMachineInstanceSpec on `vm["spec"]["template"]["spec"]`, in place.

    expand_vm_spec(vm, source, settings=DEFAULT_SETTINGS) -> dict
        What upstream's expand-vm-spec endpoint (and `virtctl expand`) answers: `expand`'s VM printed as
        Go prints it after the round trip through the API types (`goshape.go_printed`: no nulls, no empty
        lists or maps). `expand` itself keeps them: the webhook patches from the VM as received and must
        not drop what the user wrote.

    finish_expansion(vm, references=True) -> None
        Drop the matchers and status refs (only when the VM had matchers) and give the VM the shape Go's
        encoder prints
        (`status: {}`, template `metadata: {}`, `domain.resources: {}`, `domain.devices: {}`,
        `features.acpi: {}`).

Copying: only `spec.template` is deep-copied (the subtree the steps write); `metadata`, other
`spec` keys and `status` entries are shared with the input and never written.
"""
from __future__ import annotations

from types import TracebackType
from typing import Any, Final

from instancetype_webhook.kubevirt.apply import conflicts_error
from instancetype_webhook.kubevirt.apply.vmi import apply_to_template
from instancetype_webhook.kubevirt.causes import Cause, ExpandError
from instancetype_webhook.kubevirt.configuration import DEFAULT_SETTINGS, ClusterSettings
from instancetype_webhook.kubevirt.defaults import (
    set_default_network_interface,
    set_default_volume_disks,
    set_vmi_spec_defaults,
)
from instancetype_webhook.kubevirt.find import find_instancetype_spec, find_preference_spec
from instancetype_webhook.kubevirt.goshape import go_printed
from instancetype_webhook.kubevirt.jsondata import clone_tree
from instancetype_webhook.kubevirt.quantity import QuantityError
from instancetype_webhook.kubevirt.releases import CREATION_TIMESTAMP_OMITTED, ReleaseProfile
from instancetype_webhook.kubevirt.source import Source

__all__ = [
    "ExpandError",
    "apply_specs",
    "default_template_spec",
    "expand",
    "expand_vm_spec",
    "find_specs",
    "finish_expansion",
    "has_references",
    "schema_error",
    "shape_problem",
]


def has_references(vm: dict[str, Any]) -> bool:
    spec = vm.get("spec") or {}
    return spec.get("instancetype") is not None or spec.get("preference") is not None


def find_specs(vm: dict[str, Any], source: Source,
               release: ReleaseProfile) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    return find_instancetype_spec(vm, source, release), find_preference_spec(vm, source, release)


def _copy_for_write(vm: dict[str, Any]) -> dict[str, Any]:
    new_vm = dict(vm)
    spec = new_vm["spec"] = dict(vm.get("spec") or {})
    template = spec.get("template")
    spec["template"] = clone_tree(template) if isinstance(template, dict) else {}
    return new_vm


def _template_spec(vm: dict[str, Any]) -> dict[str, Any]:
    template = vm["spec"]["template"]
    spec = template.get("spec")
    if isinstance(spec, dict):
        return spec
    fresh: dict[str, Any] = {}
    template["spec"] = fresh
    return fresh


def apply_specs(
    vm: dict[str, Any],
    instancetype_spec: dict[str, Any] | None,
    preference_spec: dict[str, Any] | None,
    settings: ClusterSettings = DEFAULT_SETTINGS,
) -> tuple[dict[str, Any], list[Cause]]:
    with _data_errors():
        new_vm = _copy_for_write(vm)
        spec = _template_spec(new_vm)
        set_default_volume_disks(spec)
        set_default_network_interface(spec, settings)
        template = new_vm["spec"]["template"]
        causes = apply_to_template(template, instancetype_spec, preference_spec, settings.release)
    return new_vm, causes


def default_template_spec(vm: dict[str, Any], settings: ClusterSettings = DEFAULT_SETTINGS) -> None:
    with _data_errors():
        set_vmi_spec_defaults(_template_spec(vm), settings)


_DATA_ERRORS: Final = (QuantityError, TypeError, AttributeError, ValueError, KeyError, IndexError)


class _DataErrors:
    """Data of the wrong JSON type deep inside the VM or a referenced object -> a badRequest ExpandError.

    A class, not a generator-based contextmanager: it is entered twice per expansion."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if exc is not None and isinstance(exc, _DATA_ERRORS):
            raise ExpandError("badRequest", f"cannot expand VirtualMachine: {type(exc).__name__}: {exc}") from exc


_DATA_ERRORS_CONTEXT: Final = _DataErrors()


def _data_errors() -> _DataErrors:
    return _DATA_ERRORS_CONTEXT


def finish_expansion(vm: dict[str, Any], references: bool = True) -> None:
    """`references`: the VM had matchers, which the expansion drops with the status refs. Without them
    upstream's Expand returns the VM as it is: a leftover `status.instancetypeRef` / `preferenceRef` stays."""
    spec = vm["spec"]
    status = vm.get("status")
    if references:
        spec.pop("instancetype", None)
        spec.pop("preference", None)
    if isinstance(status, dict):
        drop = ("instancetypeRef", "preferenceRef") if references else ()
        vm["status"] = {k: v for k, v in status.items() if k not in drop}
    else:
        vm["status"] = {}
    template = spec["template"]
    metadata = template.get("metadata")
    if not isinstance(metadata, dict) or next(iter(template)) != "metadata":
        # Go prints the template's (non-pointer) metadata always, and first.
        rest = {k: v for k, v in template.items() if k != "metadata"}
        spec["template"] = template = {"metadata": metadata if isinstance(metadata, dict) else {}, **rest}
    domain = _template_spec(vm).setdefault("domain", {})
    for key in ("resources", "devices"):  # non-pointer structs: Go always prints them
        if not isinstance(domain.get(key), dict):
            domain[key] = {}
    _drop_go_zero_values(domain)
    features = domain.get("features")
    if isinstance(features, dict) and features.get("acpi") is None:
        features["acpi"] = {}


def shape_problem(vm: Any) -> str | None:
    """Why `vm` cannot be a VirtualMachine for expansion (wrong JSON types), or None."""
    if not isinstance(vm, dict):
        return "the VirtualMachine is not a JSON object"
    spec = vm.get("spec", {})
    if not isinstance(spec, dict):
        return "spec of the VirtualMachine is not an object"
    for key in ("instancetype", "preference", "template"):
        if spec.get(key) is not None and not isinstance(spec[key], dict):
            return f"spec.{key} of the VirtualMachine is not an object"
    template = spec.get("template") or {}
    for key in ("metadata", "spec"):
        if template.get(key) is not None and not isinstance(template[key], dict):
            return f"spec.template.{key} of the VirtualMachine is not an object"
    return None


# Non-pointer omitempty fields in the parts the instance type and preference own: Go never prints
# their zero value (`sockets: 0`, `dedicatedCpuPlacement: false`, `model: ""`, ...).
_GO_PLAIN_FIELDS: Final = {
    "cpu": ("sockets", "cores", "threads", "maxSockets", "model", "dedicatedCpuPlacement", "isolateEmulatorThread"),
    "devices": ("disableHotplug",),
}


def _drop_go_zero_values(domain: dict[str, Any]) -> None:
    for section, keys in _GO_PLAIN_FIELDS.items():
        part = domain.get(section)
        if isinstance(part, dict) and any(k in part and part[k] in (0, "", False) for k in keys):
            domain[section] = {k: v for k, v in part.items() if not (k in keys and v in (0, "", False))}


INVALID_VM: Final = "Object is not a valid VirtualMachine"


def schema_error(vm: dict[str, Any]) -> ExpandError | None:
    """The OpenAPI check expand-vm-spec makes on the decoded VM (Go prints it from structs first, so
    only a missing or null `spec.template`, a required pointer, can fail it)."""
    spec = vm.get("spec")
    if isinstance(spec, dict) and isinstance(spec.get("template"), dict):
        return None
    message = "spec.template in body must be of type object: \"null\""
    return ExpandError("schema", INVALID_VM, [Cause("", message)])


def expand(vm: Any, source: Source, settings: ClusterSettings = DEFAULT_SETTINGS) -> dict[str, Any]:
    problem = shape_problem(vm)
    if problem is not None:
        raise ExpandError("schema", problem)
    invalid = schema_error(vm)
    if invalid is not None:
        raise invalid
    if not has_references(vm):
        with _data_errors():
            printed = _copy_for_write(vm)
            finish_expansion(printed, references=False)
        return printed
    with _data_errors():
        instancetype_spec, preference_spec = find_specs(vm, source, settings.release)
    new_vm, causes = apply_specs(vm, instancetype_spec, preference_spec, settings)
    if causes:
        raise conflicts_error(causes)
    default_template_spec(new_vm, settings)
    with _data_errors():
        finish_expansion(new_vm)
    return new_vm


def expand_vm_spec(vm: Any, source: Source, settings: ClusterSettings = DEFAULT_SETTINGS) -> dict[str, Any]:
    """expand-vm-spec's answer: the expansion as Go prints it (see the module docstring)."""
    printed: dict[str, Any] = go_printed(expand(vm, source, settings))
    if not settings.release.has(CREATION_TIMESTAMP_OMITTED):
        _print_zero_creation_timestamps(printed)
    return printed


def _print_zero_creation_timestamps(vm: dict[str, Any]) -> None:
    """apimachinery before v0.34 (KubeVirt v1.7) prints a zero metav1.Time as `creationTimestamp: null`: in
    every ObjectMeta of the VM (its own, its template's, each dataVolumeTemplate's)."""
    spec = found if isinstance(found := vm.get("spec"), dict) else {}
    templates = spec.get("dataVolumeTemplates")
    for holder in [vm, spec.get("template"), *(templates if isinstance(templates, list) else ())]:
        if isinstance(holder, dict):
            holder.setdefault("metadata", {}).setdefault("creationTimestamp", None)
