"""What flattening changes in the guest: the devices virt-controller attaches when it starts a VM.

virt-controller's start path (startVMI) builds the VMI from the template, applies the preference's
`preferredAutoattach*` flags, auto-attaches the input device `default-0`, adds the default pod network and
interface, and only then applies the instance type and preference. Upstream's expansion (the flat VM that
`expand`/`expandAll` store) adds the default interface *before* the preference's flags are applied and never
adds the input device, and at start a flat VM has no preference left. So the same VM can get different
hardware depending on whether it was stored with its references or flat:

- input `default-0` (preferredAutoattachInputDevice): the referencing VM gets the preference's
  preferredInputBus / preferredInputType (a virtio tablet for the Windows and desktop common preferences);
  the flat VM gets the VMI defaults (a USB tablet, which also brings a qemu-xhci USB controller);
- the pod interface (preferredAutoattachPodInterface: false): the referencing VM starts without one, the
  flat VM with the default interface and pod network the expansion added.

    guest_changes(vm, flat, preference_spec, settings) -> ["flattening changes input default-0: bus virtio -> usb", ...]
    preserve_guest(vm, flat, preference_spec, settings) -> the flat VM with the referencing VM's devices written in
    review_guest(vm, flat, source, settings, preserve) -> (flat VM, warnings)   what /mutate and audit use

`vm` is the VM as stored with its references (after the mutating webhook), `flat` its expansion. Pure.
"""
from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from instancetype_webhook.kubevirt.configuration import DEFAULT_SETTINGS, ClusterSettings

__all__ = ["StartedDevices", "guest_changes", "may_change", "preserve_guest", "review_guest", "started_devices"]

AUTO_INPUT: Final = "default-0"
AUTOATTACH: Final[tuple[str, ...]] = ("GraphicsDevice", "MemBalloon", "PodInterface", "SerialConsole", "InputDevice")
BINDINGS: Final[tuple[str, ...]] = ("bridge", "masquerade", "sriov", "passt", "slirp", "macvtap", "binding")
Json = dict[str, Any]


@dataclass(frozen=True)
class StartedDevices:
    """The devices of the VMI virt-controller starts, as far as flattening can change them."""

    inputs: tuple[Json, ...]
    interfaces: tuple[Json, ...]
    networks: tuple[Json, ...]


def _obj(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _template_spec(vm: Mapping[str, Any]) -> Mapping[str, Any]:
    return _obj(_obj(_obj(vm.get("spec")).get("template")).get("spec"))


def _devices(spec: Mapping[str, Any]) -> Mapping[str, Any]:
    return _obj(_obj(spec.get("domain")).get("devices"))


def _list(value: Any) -> list[Json]:
    return [dict(item) for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _default_interface(settings: ClusterSettings) -> tuple[list[Json], list[Json]]:
    """SetDefaultNetworkInterface's interface and network (the binding checks are the expansion's job)."""
    binding = settings.default_network_binding
    interfaces = [{"name": "default", binding: {}}] if binding in ("bridge", "masquerade") else []
    return interfaces, [{"name": "default", "pod": {}}]


def started_devices(template_spec: Mapping[str, Any], preference_spec: Mapping[str, Any] | None,
                    settings: ClusterSettings = DEFAULT_SETTINGS) -> StartedDevices:
    """The devices virt-controller's start path gives a VM with this template and preference (None: a flat
    VM, or one without a preference), after the VMI defaults of the input devices."""
    devices = _devices(template_spec)
    preferred = _obj(_obj(preference_spec).get("devices"))
    flags = {name: devices.get(f"autoattach{name}") for name in AUTOATTACH}
    for name, value in flags.items():  # ApplyAutoAttachPreferences
        if value is None and preferred.get(f"preferredAutoattach{name}") is not None:
            flags[name] = preferred[f"preferredAutoattach{name}"]
    inputs = _list(devices.get("inputs"))
    if flags["InputDevice"] is True and not inputs:  # AutoAttachInputDevice
        inputs = [{"name": AUTO_INPUT}]
    interfaces, networks = _list(devices.get("interfaces")), _list(template_spec.get("networks"))
    if flags["PodInterface"] is not False and not interfaces and not networks:  # SetDefaultNetworkInterface
        interfaces, networks = _default_interface(settings)
    for item in inputs:  # ApplyToVMI: the preference's input and interface preferences, then the VMI defaults
        item["bus"] = item.get("bus") or preferred.get("preferredInputBus") or "usb"
        item["type"] = item.get("type") or preferred.get("preferredInputType") or "tablet"
    for item in interfaces:
        if not item.get("model") and preferred.get("preferredInterfaceModel"):
            item["model"] = preferred["preferredInterfaceModel"]
    return StartedDevices(tuple(inputs), tuple(interfaces), tuple(networks))


def _binding(interface: Mapping[str, Any]) -> str:
    return next((name for name in BINDINGS if name in interface), "")


def _describe_input(item: Mapping[str, Any]) -> str:
    return f"{item.get('bus')} {item.get('type')}"


def _describe_interface(item: Mapping[str, Any]) -> str:
    model = f", model {item['model']}" if item.get("model") else ""
    return f"{_binding(item) or 'no'} binding{model}"


def _by_name(items: tuple[Json, ...]) -> dict[str, Json]:
    return {str(item.get("name") or ""): item for item in items}


def _compare(what: str, before: tuple[Json, ...], after: tuple[Json, ...], keys: tuple[str, ...],
             describe: Any) -> list[str]:
    changes: list[str] = []
    old, new = _by_name(before), _by_name(after)
    for name, item in old.items():
        if name not in new:
            changes.append(f"flattening removes {what} {name} ({describe(item)})")
            continue
        diffs = [f"{key} {old_value or 'none'} -> {new_value or 'none'}" for key in keys
                 if (old_value := _attribute(item, key)) != (new_value := _attribute(new[name], key))]
        if diffs:
            changes.append(f"flattening changes {what} {name}: {', '.join(diffs)}")
    changes.extend(f"flattening adds {what} {name} ({describe(item)})" for name, item in new.items() if name not in old)
    return changes


def _attribute(item: Mapping[str, Any], key: str) -> str:
    return _binding(item) if key == "binding" else str(item.get(key) or "")


def may_change(flat: Mapping[str, Any]) -> bool:
    """Whether starting this flat VM can differ from starting it with its references (a cheap gate: only
    the auto-attached input device and a turned-off pod interface can)."""
    devices = _devices(_template_spec(flat))
    return (devices.get("autoattachInputDevice") is True and not devices.get("inputs")) \
        or devices.get("autoattachPodInterface") is False


def guest_changes(vm: Mapping[str, Any], flat: Mapping[str, Any], preference_spec: Mapping[str, Any] | None,
                  settings: ClusterSettings = DEFAULT_SETTINGS) -> list[str]:
    """What the guest of the flat VM gets differently from the VM started with its references."""
    if not may_change(flat):
        return []
    reference = started_devices(_template_spec(vm), preference_spec, settings)
    flattened = started_devices(_template_spec(flat), None, settings)
    return [*_compare("input", reference.inputs, flattened.inputs, ("bus", "type"), _describe_input),
            *_compare("interface", reference.interfaces, flattened.interfaces, ("binding", "model"),
                      _describe_interface)]


def preserve_guest(vm: Mapping[str, Any], flat: dict[str, Any], preference_spec: Mapping[str, Any] | None,
                   settings: ClusterSettings = DEFAULT_SETTINGS) -> dict[str, Any]:
    """The flat VM with the devices the referencing VM would get at start written into its template, so that
    it starts with the same hardware (a new dict when anything changes; `flat` is never written)."""
    if not guest_changes(vm, flat, preference_spec, settings):
        return flat
    reference = started_devices(_template_spec(vm), preference_spec, settings)
    kept = copy.deepcopy(flat)
    spec = kept["spec"]["template"]["spec"]
    devices = spec.setdefault("domain", {}).setdefault("devices", {})
    own = _devices(_template_spec(vm))
    if not own.get("inputs") and reference.inputs:
        devices["inputs"] = [_written_input(item) for item in reference.inputs]
    if not reference.interfaces and not reference.networks and not own.get("interfaces") \
            and not _template_spec(vm).get("networks"):
        devices.pop("interfaces", None)  # the referencing VM starts without the pod interface
        spec.pop("networks", None)
    return kept


def _written_input(item: Mapping[str, Any]) -> Json:
    return {"name": item.get("name"), "type": item.get("type"), "bus": item.get("bus")}


def review_guest(vm: dict[str, Any], flat: dict[str, Any], source: Any, settings: ClusterSettings = DEFAULT_SETTINGS,
                 preserve: bool = False) -> tuple[dict[str, Any], list[str]]:
    """(the flat VM to store, warnings): the flat VM unchanged with a warning per device flattening changes,
    or, with `preserve`, the flat VM that keeps the referencing VM's devices (and no warning)."""
    if not may_change(flat):
        return flat, []
    from instancetype_webhook.kubevirt.causes import ExpandError
    from instancetype_webhook.kubevirt.find import find_preference_spec

    try:
        preference_spec = find_preference_spec(vm, source, settings.release)
    except ExpandError:  # the expansion found it; a lookup that fails now changes nothing
        return flat, []
    if preserve:
        kept = preserve_guest(vm, flat, preference_spec, settings)
        return kept, guest_changes(vm, kept, preference_spec, settings)
    return flat, guest_changes(vm, flat, preference_spec, settings)
