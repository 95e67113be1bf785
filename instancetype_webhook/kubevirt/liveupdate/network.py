"""`netvmliveupdate.IsRestartRequired` (pkg/network/vmliveupdate/restart.go): whether the VM's interfaces
and networks changed, against the running VMI, in a way that needs a restart (an interface or network
of the VMI removed from the VM, an existing one changed in anything but `state`, a pod network added;
a multus `networkName` change when the release applies it live).

Per release (`releases`): a pod network added needs a restart from v1.8 (`POD_NETWORK_ADD_RESTART`); a
multus `networkName` (NAD) change is live on v1.8 only with the `LiveUpdateNADRef` gate, on v1.9 always
(`NAD_SWAP_ALWAYS_LIVE`), on main only for a migratable VMI (`NAD_SWAP_MIGRATABLE_ONLY`), never on v1.7.
`nad_name_live` answers the last question for the network synchroniser too."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from instancetype_webhook.kubevirt.liveupdate.semantic import normalize
from instancetype_webhook.kubevirt.releases import (
    MAIN_PROFILE,
    NAD_SWAP_ALWAYS_LIVE,
    NAD_SWAP_MIGRATABLE_ONLY,
    POD_NETWORK_ADD_RESTART,
    ReleaseProfile,
)

NAD_GATE: Final = "LiveUpdateNADRef"


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _by_name(items: Any) -> dict[str, dict[str, Any]]:
    return {str(item.get("name", "")): item for item in items or [] if isinstance(item, dict)}


def is_migratable(vmi: dict[str, Any]) -> bool:
    """vmi.IsMigratable(): the LiveMigratable condition is True."""
    return any(c.get("type") == "LiveMigratable" and c.get("status") == "True"
               for c in _obj(vmi.get("status")).get("conditions") or [] if isinstance(c, dict))


def nad_name_live(vmi: dict[str, Any], release: ReleaseProfile = MAIN_PROFILE,
                  configuration: Mapping[str, Any] | None = None) -> bool:
    """Whether a multus `networkName` change is applied to the running VMI (no restart) by `release`."""
    if release.has(NAD_SWAP_MIGRATABLE_ONLY):
        return is_migratable(vmi)
    if release.has(NAD_SWAP_ALWAYS_LIVE):
        return True
    if release.gate_state(NAD_GATE) is None:  # v1.7: no such rule
        return False
    return release.gate_enabled(NAD_GATE, configuration or {})


def _iface(iface: dict[str, Any] | None) -> Any:
    return normalize({k: v for k, v in (iface or {}).items() if k != "state"})


def _net(net: dict[str, Any] | None, ignore_nad_name: bool) -> Any:
    net = dict(net or {})
    if ignore_nad_name and isinstance(net.get("multus"), dict):
        net["multus"] = {k: v for k, v in net["multus"].items() if k != "networkName"}
    return normalize(net)


def network_restart_required(vm_spec: dict[str, Any], vmi: dict[str, Any], release: ReleaseProfile = MAIN_PROFILE,
                             configuration: Mapping[str, Any] | None = None) -> bool:
    vmi_spec = _obj(vmi.get("spec"))
    desired_ifaces = _by_name(_obj(_obj(vm_spec.get("domain")).get("devices")).get("interfaces"))
    current_ifaces = _by_name(_obj(_obj(vmi_spec.get("domain")).get("devices")).get("interfaces"))
    for name, iface in current_ifaces.items():
        if name not in desired_ifaces or _iface(desired_ifaces[name]) != _iface(iface):
            return True
    desired_nets, current_nets = _by_name(vm_spec.get("networks")), _by_name(vmi_spec.get("networks"))
    has_pod = any(n.get("pod") is not None for n in desired_nets.values())
    if release.has(POD_NETWORK_ADD_RESTART) and has_pod \
            and not any(n.get("pod") is not None for n in current_nets.values()):
        return True
    ignore = nad_name_live(vmi, release, configuration)
    for name, net in current_nets.items():
        if name not in desired_nets or _net(desired_nets[name], ignore) != _net(net, ignore):
            return True
    return False
