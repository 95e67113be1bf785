"""A VM as it was created and started, reproduced offline: the stored VM (virt-api's VM mutating webhook,
then the controller's ControllerRevisions and status refs, the legacy firmware uuid), the VM-start spec
(`revision-start-vm-<uid>-<generation>`, with the revision names patched in) and the running VMI
(virt-controller's `startVMI`, then virt-api's VMI create defaults for the release and architecture,
`liveupdate.vmi_defaults`, the same the domain XML is rendered from; with the status virt-handler reports
for a running VMI). Used when no cluster is at hand (files, the conformance cases).

    start_vm(vm, source, settings) -> Started        (raises StartError with a readable message)
    running_vmi(stored_vm, source, settings) -> dict (raises StartError)
    merge_patch(target, patch) -> a new value        (RFC 7386)
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any, Final

from instancetype_webhook.kubevirt.apply.vmi import apply_to_template
from instancetype_webhook.kubevirt.causes import ExpandError
from instancetype_webhook.kubevirt.configuration import ClusterSettings, release_defaults
from instancetype_webhook.kubevirt.defaults import set_default_network_interface, set_default_volume_disks
from instancetype_webhook.kubevirt.find import (
    GROUP,
    RESOURCES,
    find_instancetype_spec,
    find_preference_spec,
    not_found,
)
from instancetype_webhook.kubevirt.jsondata import clone_tree
from instancetype_webhook.kubevirt.liveupdate.model import StartError
from instancetype_webhook.kubevirt.liveupdate.revisions import (
    FAMILIES,
    LayeredSource,
    controller_revision,
    revision_specs,
)
from instancetype_webhook.kubevirt.liveupdate.vmi_defaults import defaults_config, vmi_create_defaults
from instancetype_webhook.kubevirt.mutator import mutate_vm
from instancetype_webhook.kubevirt.releases import ARM64_EFI_SECURE_BOOT_DEFAULT_FALSE
from instancetype_webhook.kubevirt.source import Source

# virt-controller's namespace for the name-based ("legacy") firmware UUID.
FIRMWARE_UUID_NAMESPACE: Final = uuid.UUID("6a1a24a1-4061-4607-8bf4-a3963d0c5895")


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


@dataclass(frozen=True)
class Started:
    """The stored VM (with its status refs), the spec it started with, the source that also holds the
    revisions the controller stored, and the running VMI."""

    stored_vm: dict[str, Any]
    start_spec: dict[str, Any]
    source: LayeredSource
    vmi: dict[str, Any]


def legacy_firmware_uuid(vm_name: str) -> str:
    return str(uuid.uuid5(FIRMWARE_UUID_NAMESPACE, vm_name))


def vm_defaults(vm: dict[str, Any], settings: ClusterSettings) -> None:
    """virt-api's SetVirtualMachineDefaults on the VM template, in place: architecture, machine type."""
    spec = vm["spec"]["template"].setdefault("spec", {})
    if not spec.get("architecture"):
        spec["architecture"] = settings.architecture
    domain = spec.setdefault("domain", {})
    machine = _obj(domain.get("machine"))
    if not machine.get("type"):
        domain["machine"] = {**machine, "type": settings.machine_type_for(spec["architecture"])}


def admitted_vm(vm: dict[str, Any], old_vm: dict[str, Any] | None, source: Source,
                settings: ClusterSettings) -> dict[str, Any]:
    """The VM as virt-api's VM mutating webhook stores it (its instancetype stage, then the VM defaults)."""
    mutation = mutate_vm(vm, old_vm, source, settings)
    if mutation.vm is None:
        raise StartError(f"the VM mutating webhook refuses the VM: {mutation.verdict.message}")
    stored = dict(mutation.vm)
    spec = stored["spec"] = dict(_obj(stored.get("spec")))
    if not isinstance(spec.get("template"), dict):
        raise StartError("the VirtualMachine has no spec.template")
    spec["template"] = clone_tree(spec["template"])
    vm_defaults(stored, settings)
    return stored


def _store_revisions(vm: dict[str, Any], source: Source) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """revision.Store at the first sync: status refs, and the revisions of the live objects it creates."""
    spec = _obj(vm.get("spec"))
    status = dict(_obj(vm.get("status")))
    created: dict[str, dict[str, Any]] = {}
    namespace = str(_obj(vm.get("metadata")).get("namespace") or getattr(source, "default_namespace", "default"))
    for family, key in FAMILIES:
        matcher = spec.get(key)
        if not isinstance(matcher, dict):
            continue
        try:
            kind = family.resolve_kind(str(matcher.get("kind") or ""))
        except ExpandError as exc:
            raise StartError(exc.message) from exc
        ref: dict[str, Any] = {"name": matcher.get("name", ""), "kind": kind}
        known = _obj(_obj(status.get(family.status_key)).get("controllerRevisionRef")).get("name")
        if known and source.get_revision(str(known), namespace) is not None:
            continue  # a stored VM (e.g. read from a cluster) that already references its revision
        if matcher.get("revisionName"):
            ref["controllerRevisionRef"] = {"name": matcher["revisionName"]}
        else:
            obj = source.get(kind, str(matcher.get("name") or ""), namespace)
            if obj is None:
                raise StartError(not_found(f"{RESOURCES[kind][0]}.{GROUP}", str(matcher.get("name") or "")).message)
            revision = controller_revision(vm, kind, {**obj, "kind": kind})
            created[revision["metadata"]["name"]] = revision
            ref["controllerRevisionRef"] = {"name": revision["metadata"]["name"]}
        status[family.status_key] = ref
    return status, created


def start_vm(vm: dict[str, Any], source: Source, settings: ClusterSettings) -> Started:
    """The VM created from `vm` and started by virt-controller, with its running VMI."""
    if not isinstance(vm, dict) or not isinstance(_obj(vm.get("spec")).get("template"), dict):
        raise StartError("the VirtualMachine has no spec.template")
    stored = admitted_vm(vm, None, source, settings)
    meta = stored["metadata"] = dict(_obj(stored.get("metadata")))
    if not meta.get("name"):
        raise StartError("the VirtualMachine has no metadata.name")
    meta.setdefault("generation", 1)
    domain = stored["spec"]["template"]["spec"].setdefault("domain", {})
    firmware = _obj(domain.get("firmware"))
    if not firmware.get("uuid"):
        domain["firmware"] = {**firmware, "uuid": legacy_firmware_uuid(str(meta["name"]))}
    status, created = _store_revisions(stored, source)
    stored["status"] = status
    layered = LayeredSource(source, created)
    vmi = running_vmi(stored, layered, settings)
    return Started(stored, revision_specs(stored), layered, vmi)


def _conditions() -> list[dict[str, str]]:
    return [{"type": "Ready", "status": "True"}, {"type": "LiveMigratable", "status": "True"}]


def running_vmi(vm: dict[str, Any], source: Source, settings: ClusterSettings) -> dict[str, Any]:
    """startVMI's VMI for the stored `vm`, after the VMI create defaults, as virt-handler reports it running."""
    template = _obj(_obj(vm.get("spec")).get("template"))
    spec: dict[str, Any] = clone_tree(_obj(template.get("spec")))
    try:
        instancetype = find_instancetype_spec(vm, source, settings.release)
        preference = find_preference_spec(vm, source, settings.release)
        set_default_volume_disks(spec)
        devices = spec.setdefault("domain", {}).setdefault("devices", {})
        if devices.get("autoattachInputDevice") and not devices.get("inputs"):
            devices["inputs"] = [{"name": "default-0", "bus": "usb", "type": "tablet"}]
        set_default_network_interface(spec, settings)
        vmi_template = {"metadata": clone_tree(_obj(template.get("metadata"))), "spec": spec}
        conflicts = apply_to_template(vmi_template, instancetype, preference, settings.release)
        if conflicts:
            fields = ", ".join(c.field for c in conflicts)
            raise StartError(f"VMI conflicts with instancetype spec in fields: [{fields}]")
        vmi: dict[str, Any] = {"metadata": vmi_template["metadata"], "spec": spec}
        configuration = settings.configuration or release_defaults(settings.release)
        vmi_create_defaults(vmi, settings, defaults_config(configuration))
    except ExpandError as exc:
        raise StartError(exc.message) from exc
    refusal = _arm64_secure_boot_refusal(spec, settings)
    if refusal is not None:
        raise StartError(refusal)
    meta = _obj(vm.get("metadata"))
    status: dict[str, Any] = {"phase": "Running", "conditions": _conditions(), **_obj(vmi.get("status"))}
    vmi_meta = {"name": meta.get("name"), "namespace": meta.get("namespace") or "default"}
    annotations = _obj(_obj(vmi.get("metadata")).get("annotations"))
    if annotations:
        vmi_meta["annotations"] = annotations
    return {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance", "metadata": vmi_meta,
            "spec": spec, "status": status}


ARM64_SECURE_BOOT_FIELD: Final = "spec.domain.firmware.bootloader.efi.secureboot"


def _arm64_secure_boot_refusal(spec: dict[str, Any], settings: ClusterSettings) -> str | None:
    """Before v1.8.3 the VMI create admitter refuses an arm64 EFI whose secureBoot is unset or true (the
    defaults set it only on the EFI they create): virt-controller cannot create the VMI."""
    if spec.get("architecture") != "arm64" or settings.release.has(ARM64_EFI_SECURE_BOOT_DEFAULT_FALSE):
        return None
    bootloader = _obj(_obj(_obj(spec.get("domain")).get("firmware")).get("bootloader"))
    if not isinstance(bootloader.get("efi"), dict) or bootloader["efi"].get("secureBoot") is False:
        return None
    return (f"the VMI create webhook refuses the VMI: {ARM64_SECURE_BOOT_FIELD}: "
            "UEFI secure boot is currently not supported on aarch64 Arch")


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch: objects merge, `null` removes, anything else replaces."""
    if not isinstance(patch, dict):
        return clone_tree(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


__all__ = ["Started", "admitted_vm", "legacy_firmware_uuid",
           "merge_patch", "running_vmi", "start_vm", "vm_defaults"]
