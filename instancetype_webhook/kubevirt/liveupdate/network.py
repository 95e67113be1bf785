"""`netvmliveupdate.IsRestartRequired` (pkg/network/vmliveupdate/restart.go): whether the VM's interfaces
and networks changed, against the running VMI, in a way that needs a restart (an interface or network
of the VMI removed from the VM, an existing one changed in anything but `state`, a pod network added;
a migratable VMI tolerates a multus `networkName` change)."""
from __future__ import annotations

from typing import Any

from instancetype_webhook.kubevirt.liveupdate.semantic import normalize


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _by_name(items: Any) -> dict[str, dict[str, Any]]:
    return {str(item.get("name", "")): item for item in items or [] if isinstance(item, dict)}


def is_migratable(vmi: dict[str, Any]) -> bool:
    """vmi.IsMigratable(): the LiveMigratable condition is True."""
    return any(c.get("type") == "LiveMigratable" and c.get("status") == "True"
               for c in _obj(vmi.get("status")).get("conditions") or [] if isinstance(c, dict))


def _iface(iface: dict[str, Any] | None) -> Any:
    return normalize({k: v for k, v in (iface or {}).items() if k != "state"})


def _net(net: dict[str, Any] | None, ignore_nad_name: bool) -> Any:
    net = dict(net or {})
    if ignore_nad_name and isinstance(net.get("multus"), dict):
        net["multus"] = {k: v for k, v in net["multus"].items() if k != "networkName"}
    return normalize(net)


def network_restart_required(vm_spec: dict[str, Any], vmi: dict[str, Any]) -> bool:
    vmi_spec = _obj(vmi.get("spec"))
    desired_ifaces = _by_name(_obj(_obj(vm_spec.get("domain")).get("devices")).get("interfaces"))
    current_ifaces = _by_name(_obj(_obj(vmi_spec.get("domain")).get("devices")).get("interfaces"))
    for name, iface in current_ifaces.items():
        if name not in desired_ifaces or _iface(desired_ifaces[name]) != _iface(iface):
            return True
    desired_nets, current_nets = _by_name(vm_spec.get("networks")), _by_name(vmi_spec.get("networks"))
    has_pod = any(n.get("pod") is not None for n in desired_nets.values())
    if has_pod and not any(n.get("pod") is not None for n in current_nets.values()):
        return True
    ignore = is_migratable(vmi)
    for name, net in current_nets.items():
        if name not in desired_nets or _net(desired_nets[name], ignore) != _net(net, ignore):
            return True
    return False
