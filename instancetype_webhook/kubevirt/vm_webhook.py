"""Admission answers: the instance type / preference stage of the VM validating webhook, and object admission.

`validate_vm` follows upstream's VM validating webhook (vms-admitter.go + pkg/instancetype/webhooks/vm):

1. resolve the instance type and the preference; a lookup error (not found, unknown kind, missing
   revision) is *ignored* for that object, as upstream does, and reported as a warning;
2. if either resolved: the spread divisibility check (its one cause is the only answer), then the
   instance type and preference are applied to a copy of the VM and every conflict is a cause;
3. VMI spec defaults are applied to that copy;
4. the preference requirements are checked against it (first failure only).

A rejection built from causes is code 422 with the cause messages joined by ", " (at most 10 causes are
kept; the message then ends with ", and <k> more validation errors"); a rejection built from an error
is code 400 with the error text and no causes.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from instancetype_webhook.kubevirt.apply.vmi import apply_to_template
from instancetype_webhook.kubevirt.causes import ExpandError, Verdict
from instancetype_webhook.kubevirt.configuration import DEFAULT_SETTINGS, ClusterSettings
from instancetype_webhook.kubevirt.defaults import set_vmi_spec_defaults
from instancetype_webhook.kubevirt.find import find_instancetype_spec, find_preference_spec
from instancetype_webhook.kubevirt.jsondata import clone_tree
from instancetype_webhook.kubevirt.objects import LAUNCH_SECURITY_WARNING as LAUNCH_SECURITY_DEPRECATED
from instancetype_webhook.kubevirt.objects import admit_object as admit_object_as_main
from instancetype_webhook.kubevirt.preference.requirements import check_requirements
from instancetype_webhook.kubevirt.preference.validation import check_spread
from instancetype_webhook.kubevirt.quantity import QuantityError
from instancetype_webhook.kubevirt.rejection import MAX_CAUSES, error, reject
from instancetype_webhook.kubevirt.releases import LAUNCH_SECURITY_DEPRECATION_WARNING, MAIN_PROFILE, ReleaseProfile
from instancetype_webhook.kubevirt.source import Source

__all__ = ["MAX_CAUSES", "MAX_WARNING_LENGTH", "admit_object", "reject", "validate_vm", "verdict_for_specs"]

MAX_WARNING_LENGTH: Final = 120

Spec = dict[str, Any]


def admit_object(obj: Mapping[str, Any], operation: str = "CREATE", release: ReleaseProfile = MAIN_PROFILE) -> Verdict:
    """Upstream's instance type / preference admission (objects.admit_object) as `release` answers: the
    warning on an instance type's `launchSecurity` exists from v1.9 (`LAUNCH_SECURITY_DEPRECATION_WARNING`)."""
    verdict = admit_object_as_main(obj, operation)
    if not release.has(LAUNCH_SECURITY_DEPRECATION_WARNING):
        verdict.warnings = [w for w in verdict.warnings if w != LAUNCH_SECURITY_DEPRECATED]
    return verdict


def ignored_lookup_warning(noun: str, matcher: Mapping[str, Any], exc: ExpandError) -> str:
    """`<noun> not checked: <lookup error>`, at most 120 characters, always naming the object."""
    text = f"{noun} not checked: {exc.message}"
    if len(text) <= MAX_WARNING_LENGTH:
        return text
    name = str(matcher.get("name") or matcher.get("revisionName") or "")
    head = f'{noun} not checked: "'
    tail = f'" {exc.kind}'
    room = MAX_WARNING_LENGTH - len(head) - len(tail)
    if len(name) > room:
        keep = max(room - 3, 0)
        name = name[: keep // 2 + keep % 2] + "..." + name[len(name) - keep // 2 :] if keep else "..."
    return head + name + tail


def _lookup(
    vm: dict[str, Any], source: Source, key: str, noun: str,
    find: Callable[[dict[str, Any], Source, ReleaseProfile], Spec | None], warnings: list[str],
    release: ReleaseProfile,
) -> Spec | None:
    try:
        return find(vm, source, release)
    except ExpandError as exc:
        warnings.append(ignored_lookup_warning(noun, (vm.get("spec") or {}).get(key) or {}, exc))
        return None


def _not_object(value: Any) -> bool:
    return value is not None and not isinstance(value, dict)


def _shape_error(vm: Any) -> str | None:
    if not isinstance(vm, dict):
        return "the VirtualMachine is not a JSON object"
    if _not_object(vm.get("spec")):
        return "spec of the VirtualMachine is not an object"
    spec = vm.get("spec") or {}
    for key in ("instancetype", "preference", "template"):
        if _not_object(spec.get(key)):
            return f"spec.{key} of the VirtualMachine is not an object"
    template = spec.get("template") or {}
    for key in ("metadata", "spec"):
        if _not_object(template.get(key)):
            return f"spec.template.{key} of the VirtualMachine is not an object"
    if _not_object((template.get("spec") or {}).get("domain")):
        return "spec.template.spec.domain of the VirtualMachine is not an object"
    return None


def validate_vm(vm: Any, source: Source, settings: ClusterSettings = DEFAULT_SETTINGS) -> Verdict:
    """The instance type / preference stage of upstream's VM validating webhook; the VM is never modified."""
    problem = _shape_error(vm)
    if problem is not None:
        return error(problem)
    if (vm.get("metadata") or {}).get("deletionTimestamp"):
        return Verdict.allow()
    warnings: list[str] = []
    release = settings.release
    instancetype = _lookup(vm, source, "instancetype", "instance type", find_instancetype_spec, warnings, release)
    preference = _lookup(vm, source, "preference", "preference", find_preference_spec, warnings, release)
    return verdict_for_specs(vm, instancetype, preference, settings, warnings)


def verdict_for_specs(
    vm: dict[str, Any], instancetype: Spec | None, preference: Spec | None, settings: ClusterSettings,
    warnings: list[str],
) -> Verdict:
    """validate_vm's answer once the specs were looked up (`warnings`: the ignored lookup errors)."""
    if instancetype is None and preference is None:
        refused = _defaults_refusal(vm, settings)
        return error(refused) if refused is not None else Verdict.allow(warnings)
    try:
        verdict = _check(vm, instancetype, preference, settings)
    except ExpandError as exc:  # the defaults refused (e.g. bridge binding not permitted)
        return error(exc.message)
    except QuantityError as bad_quantity:
        return error(str(bad_quantity))
    except (TypeError, AttributeError, KeyError, ValueError) as malformed:  # a malformed field deep in the VM or a spec
        return error("cannot apply the instance type and preference: malformed field "
                     f"({type(malformed).__name__}: {malformed})")
    verdict.warnings = warnings + verdict.warnings
    return verdict


def _defaults_refusal(vm: dict[str, Any], settings: ClusterSettings) -> str | None:
    """Upstream's webhook sets the VMI defaults on every VM, with references or not: the cluster can refuse
    them (the default bridge interface when bridge on the pod network is not permitted, slirp)."""
    template = (vm.get("spec") or {}).get("template") or {}
    vmi_spec = clone_tree(template.get("spec") or {})
    try:
        set_vmi_spec_defaults(vmi_spec, settings)
    except ExpandError as exc:
        return exc.message
    except (QuantityError, TypeError, AttributeError, KeyError, ValueError):  # malformed: the schema's to refuse
        return None
    return None


def _check(vm: dict[str, Any], instancetype: Spec | None, preference: Spec | None,
           settings: ClusterSettings) -> Verdict:
    spread = check_spread(instancetype, preference)
    if spread is not None:
        return reject([spread])
    # Like upstream's webhook: ApplyToVMI on a copy of the template (no default disks or interface first),
    # then SetDefaultVirtualMachineInstanceSpec, then the requirements.
    template = clone_tree((vm.get("spec") or {}).get("template") or {})
    conflicts = apply_to_template(template, instancetype, preference, settings.release)
    if conflicts:
        return reject(conflicts)
    vmi_spec = template.setdefault("spec", {})
    set_vmi_spec_defaults(vmi_spec, settings)
    shortfall = check_requirements(instancetype, preference, vmi_spec)
    if shortfall is not None:
        return reject([shortfall])
    return Verdict.allow()
