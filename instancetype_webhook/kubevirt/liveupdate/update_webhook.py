"""The UPDATE of a running VM through virt-api's two VM webhooks, as the API server runs them:
the mutating webhook's instancetype stage (its matcher rule: a matcher `name` changed while an old
`revisionName` is kept is refused), then the validating webhook on the VM it leaves: the instancetype
stage (conflicts, spread topology, preference requirements), and the checks of `ValidateVirtualMachineSpec`
whose answer an instance type, a preference or the release can change, in upstream's order:
`validateGuestMemoryLimit` (Stage), `validateCPUHotplug`, before v1.8 `validateArchitecture` (an
architecture other than virt-api's own needs the MultiArchitecture gate: `MULTI_ARCHITECTURE_CHECK_REMOVED`),
`validatePanicDevices`' gate check (the PanicDevices gate, Beta and so off unless listed before v1.9), then
under LiveUpdate `validateLiveUpdateCPU` and, with an explicit `maxGuest`, `ValidateLiveUpdateMemory`."""
from __future__ import annotations

from typing import Any, Final, NamedTuple

from instancetype_webhook.kubevirt.apply.vmi import apply_to_template
from instancetype_webhook.kubevirt.causes import FIELD_VALUE_INVALID, Cause, ExpandError, Verdict
from instancetype_webhook.kubevirt.configuration import ClusterSettings
from instancetype_webhook.kubevirt.defaults import set_vmi_spec_defaults
from instancetype_webhook.kubevirt.find import find_instancetype_spec, find_preference_spec
from instancetype_webhook.kubevirt.jsondata import clone_tree
from instancetype_webhook.kubevirt.liveupdate.hotplug import is_live_update, validate_live_update_memory
from instancetype_webhook.kubevirt.liveupdate.start import vm_defaults
from instancetype_webhook.kubevirt.mutator import mutate_vm
from instancetype_webhook.kubevirt.quantity import QuantityError, canonical, parse
from instancetype_webhook.kubevirt.rejection import reject
from instancetype_webhook.kubevirt.releases import MULTI_ARCHITECTURE_CHECK_REMOVED
from instancetype_webhook.kubevirt.source import Source
from instancetype_webhook.kubevirt.vm_webhook import validate_vm

SOCKETS_FIELD: Final = "spec.template.spec.domain.cpu.sockets"
GUEST_FIELD: Final = "spec.template.spec.domain.memory.guest"
TOO_MANY_SOCKETS: Final = "Number of sockets in CPU topology is greater than the maximum sockets allowed"
ARCHITECTURE_FIELD: Final = "spec.template.spec.architecture"
MULTI_ARCHITECTURE_MSG: Final = ("MultiArchitecture feature gate is not enabled in kubevirt-config, invalid entry "
                                 f"{ARCHITECTURE_FIELD}")
PANIC_FIELD: Final = "spec.template.spec.domain.devices.panicDevices"
PANIC_GATE_MSG: Final = "Panic Devices feature gate is not enabled in kubevirt-config"
# runtime.GOARCH of virt-api: the architecture its own binary was built for (an amd64 control plane assumed)
VIRT_API_ARCHITECTURE: Final = "amd64"


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


class Admitted(NamedTuple):
    """The UPDATE's verdict, and the VM as stored when it is allowed (None when refused)."""

    verdict: Verdict
    vm: dict[str, Any] | None


def _hotplug_causes(vm: dict[str, Any], source: Source, settings: ClusterSettings) -> list[Cause]:
    template = clone_tree(_obj(_obj(vm.get("spec")).get("template")))
    spec = template.setdefault("spec", {})
    try:
        release = settings.release
        apply_to_template(template, find_instancetype_spec(vm, source, release),
                          find_preference_spec(vm, source, release), release)
        set_vmi_spec_defaults(spec, settings)
    except (ExpandError, QuantityError, TypeError, AttributeError, KeyError, ValueError):
        return []  # a lookup the validating webhook ignores; nothing to check on
    domain = _obj(spec.get("domain"))
    cpu, memory = _obj(domain.get("cpu")), _obj(domain.get("memory"))
    live = is_live_update(settings.configuration)
    causes = [] if live else _guest_above_limit(domain)
    too_many = bool(cpu.get("maxSockets")) and int(cpu.get("sockets") or 0) > int(cpu["maxSockets"])
    if too_many:
        causes.append(Cause(FIELD_VALUE_INVALID, TOO_MANY_SOCKETS, SOCKETS_FIELD))
    causes += gate_causes(spec, settings)
    if not live:
        return causes
    if too_many:
        causes.append(Cause(FIELD_VALUE_INVALID, TOO_MANY_SOCKETS, SOCKETS_FIELD))
    if memory.get("maxGuest") is not None:
        problem = validate_live_update_memory(spec, memory["maxGuest"])
        if problem is not None:
            causes.append(Cause(FIELD_VALUE_INVALID, problem, GUEST_FIELD))
    return causes


def gate_causes(spec: dict[str, Any], settings: ClusterSettings) -> list[Cause]:
    """The feature gate checks of the VMI spec validation (`spec`: the template spec after the instance type,
    preference and defaults) that differ per release: MultiArchitecture before v1.8, PanicDevices."""
    release, configuration = settings.release, settings.configuration
    causes: list[Cause] = []
    architecture = spec.get("architecture")
    if (not release.has(MULTI_ARCHITECTURE_CHECK_REMOVED) and architecture
            and architecture != VIRT_API_ARCHITECTURE and not release.gate_enabled("MultiArchitecture", configuration)):
        causes.append(Cause("FieldValueRequired", MULTI_ARCHITECTURE_MSG, ARCHITECTURE_FIELD))
    devices = _obj(_obj(spec.get("domain")).get("devices"))
    if devices.get("panicDevices") is not None and not release.gate_enabled("PanicDevices", configuration):
        causes.append(Cause(FIELD_VALUE_INVALID, PANIC_GATE_MSG, PANIC_FIELD))
    return causes


def _guest_above_limit(domain: dict[str, Any]) -> list[Cause]:
    """validateGuestMemoryLimit (Stage only): the guest memory may not exceed a memory limit."""
    guest = _obj(domain.get("memory")).get("guest")
    limit = _obj(_obj(domain.get("resources")).get("limits")).get("memory")
    try:
        if guest is None or limit is None or parse(limit).is_zero() or parse(limit) >= parse(guest):
            return []
    except QuantityError:
        return []
    message = (f"{GUEST_FIELD} '{canonical(guest)}' must be equal to or less than the memory limit "
               f"spec.template.spec.domain.resources.limits.memory '{canonical(limit)}'")
    return [Cause(FIELD_VALUE_INVALID, message, GUEST_FIELD)]


def admit_update(stored_vm: dict[str, Any], new_vm: dict[str, Any], source: Source,
                 settings: ClusterSettings) -> Admitted:
    """The UPDATE from `stored_vm` to `new_vm`: the verdict, and the VM as the API server stores it."""
    request = dict(new_vm)
    if request.get("status") is None and stored_vm.get("status") is not None:
        request["status"] = stored_vm["status"]  # the API server keeps the status on a spec update
    mutation = mutate_vm(request, stored_vm, source, settings)
    if mutation.vm is None:
        return Admitted(mutation.verdict, None)
    mutated = dict(mutation.vm)
    mutated["spec"] = dict(_obj(mutated.get("spec")))
    if not isinstance(mutated["spec"].get("template"), dict):
        return Admitted(Verdict(False, "missing virtual machine template.", 422,
                                [Cause("FieldValueRequired", "missing virtual machine template.", "spec.template")]),
                        None)
    mutated["spec"]["template"] = clone_tree(mutated["spec"]["template"])
    vm_defaults(mutated, settings)
    verdict = validate_vm(mutated, source, settings)
    if not verdict.allowed:
        return Admitted(verdict, None)
    causes = _hotplug_causes(mutated, source, settings)
    if causes:
        return Admitted(reject(causes), None)
    return Admitted(Verdict.allow(mutation.verdict.warnings + verdict.warnings), _stored(stored_vm, mutated))


def _stored(stored_vm: dict[str, Any], mutated: dict[str, Any]) -> dict[str, Any]:
    """What the API server stores: the new spec, the new labels/annotations over the old ones, the old status,
    the generation bumped when the spec changed."""
    old_meta, new_meta = _obj(stored_vm.get("metadata")), _obj(mutated.get("metadata"))
    meta = dict(old_meta)
    for key in ("labels", "annotations"):
        merged = {**_obj(old_meta.get(key)), **_obj(new_meta.get(key))}
        if merged:
            meta[key] = merged
    if mutated.get("spec") != stored_vm.get("spec"):
        meta["generation"] = int(old_meta.get("generation") or 1) + 1
    out = {**stored_vm, "metadata": meta, "spec": mutated["spec"]}
    if stored_vm.get("status") is not None:
        out["status"] = stored_vm["status"]
    return out
