"""The domain of a VirtualMachine as it will be stored under a reference policy and then started.

    render_stored_vm(vm, source, policy, config, preserve_guest=False) -> XML   (`domxml -f vm.yaml`, /preview)
    started_vmi(vm, source, flat, config, uid) -> VMI

The VM first goes through the VM mutating webhook's instancetype stage (instancetype_webhook.kubevirt.mutator). Then:
- `reference`: the VM is stored with its matchers. virt-controller's start path builds the VMI from the
  template, applies the preference's preferredAutoattach* flags, auto-attaches the input device `default-0`
  when asked to (preferredAutoattachInputDevice), adds the default pod interface unless the flags turned it
  off (preferredAutoattachPodInterface: false), and only then applies the instance type and preference, so
  the preference's preferredInputBus/preferredInputType reach `default-0` (a virtio tablet for the Windows
  and desktop preferences);
- `expand` / `expandAll`: the flat VM (kubevirt.expand) is stored; at start it has no preference any
  more, so `default-0` keeps the VMI defaults (a USB tablet, with a qemu-xhci controller). This is what
  upstream really runs after an expansion; comparing both renderings shows what flattening changes.
  With `preserve_guest` (`serve --preserve-guest`, `domxml --preserve-guest`) the flat VM keeps the devices
  the referencing VM gets at start (instancetype_webhook.kubevirt.guest): a virtio tablet again, the opt-in divergence.
"""
from __future__ import annotations

import copy
from typing import Any, Final

from instancetype_webhook.domxml import render_domain
from instancetype_webhook.domxml.cluster import DEFAULT_DOMAIN_CONFIG, DomainConfig
from instancetype_webhook.domxml.context import LauncherContext
from instancetype_webhook.domxml.errors import DomainError
from instancetype_webhook.domxml.vmi import vmi_from_vm
from instancetype_webhook.kubevirt.expand import expand
from instancetype_webhook.kubevirt.mutator import mutate_vm
from instancetype_webhook.kubevirt.source import Source

POLICIES: Final = ("reference", "expand", "expandAll")
AUTO_INPUT: Final = {"name": "default-0"}


def stored_vm(vm: dict[str, Any], source: Source, config: DomainConfig = DEFAULT_DOMAIN_CONFIG) -> dict[str, Any]:
    """The VM as the mutating webhook's instancetype stage leaves it (DomainError when it denies)."""
    mutation = mutate_vm(vm, None, source, config.settings)
    if mutation.vm is None:
        raise DomainError(f"the VM mutating webhook denies the VM: {mutation.verdict.message}")
    return mutation.vm


def started_vmi(vm: dict[str, Any], source: Source, flat: bool, config: DomainConfig = DEFAULT_DOMAIN_CONFIG,
                uid: str | None = None) -> dict[str, Any]:
    """The VMI virt-controller creates for ``vm`` stored flat (``flat``) or with its references.

    Raises ExpandError when a reference cannot be resolved or conflicts."""
    expanded = expand(vm, source, config.settings)
    if not flat and expanded is not vm:
        if _wants_auto_input(expanded):
            expanded = expand(_with_auto_input(vm), source, config.settings)
        if _pod_interface_turned_off(vm, expanded):
            expanded = _without_pod_interface(expanded)
    return vmi_from_vm(expanded, uid=uid)


def render_stored_vm(vm: dict[str, Any], source: Source, policy: str = "reference",
                     config: DomainConfig = DEFAULT_DOMAIN_CONFIG, uid: str | None = None,
                     context: LauncherContext | None = None, preserve_guest: bool = False) -> str:
    """The domain XML of ``vm`` stored under ``policy`` and started (ExpandError / DomainError on refusal)."""
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r}: expected one of {', '.join(POLICIES)}")
    stored = stored_vm(vm, source, config)
    if preserve_guest and policy != "reference":
        stored = _preserved(stored, source, config)
    vmi = started_vmi(stored, source, policy != "reference", config, uid)
    return render_domain(vmi, context, config=config)


def _preserved(vm: dict[str, Any], source: Source, config: DomainConfig) -> dict[str, Any]:
    """The flat VM as `--preserve-guest` stores it (it keeps the referencing VM's started devices)."""
    from instancetype_webhook.kubevirt.guest import review_guest

    flat, _ = review_guest(vm, expand(vm, source, config.settings), source, config.settings, preserve=True)
    return flat


def _template_devices(vm: dict[str, Any]) -> dict[str, Any]:
    spec = ((vm.get("spec") or {}).get("template") or {}).get("spec") or {}
    return (spec.get("domain") or {}).get("devices") or {}


def _wants_auto_input(flat: dict[str, Any]) -> bool:
    devices = _template_devices(flat)
    return bool(devices.get("autoattachInputDevice")) and not devices.get("inputs")


def _pod_interface_turned_off(vm: dict[str, Any], flat: dict[str, Any]) -> bool:
    """The preference turns the pod interface off (preferredAutoattachPodInterface: false) for a VM that names
    no interface or network: virt-controller applies that flag before it would add the default interface,
    while the expansion added it first."""
    own_spec = ((vm.get("spec") or {}).get("template") or {}).get("spec") or {}
    own = _template_devices(vm)
    if own.get("autoattachPodInterface") is not None or own.get("interfaces") or own_spec.get("networks"):
        return False
    return _template_devices(flat).get("autoattachPodInterface") is False


def _without_pod_interface(flat: dict[str, Any]) -> dict[str, Any]:
    flat = copy.deepcopy(flat)
    spec = flat["spec"]["template"]["spec"]
    spec.get("domain", {}).get("devices", {}).pop("interfaces", None)
    spec.pop("networks", None)
    return flat


def _with_auto_input(vm: dict[str, Any]) -> dict[str, Any]:
    """``vm`` with the auto-attached input in its template, as virt-controller adds it before ApplyToVMI."""
    vm = copy.deepcopy(vm)
    template = vm["spec"].setdefault("template", {})
    spec = template.get("spec")
    if not isinstance(spec, dict):
        spec = template["spec"] = {}
    devices = spec.setdefault("domain", {}).setdefault("devices", {})
    devices["inputs"] = [dict(AUTO_INPUT)]
    return vm
