"""The network synchronizer of virt-controller's VM sync (pkg/network/controllers/vm.go `Sync`), which runs
under both rollout strategies and whether or not a restart is pending: a VM interface the VMI lacks is
hot-plugged when its binding is bridge or SR-IOV and it is not `state: absent`; a changed `state` is copied
onto the VMI's interface (unless the VMI may use ordinal secondary interface names); interfaces that end up
`absent` and have no status are dropped with their networks; the VMI takes the VM's multus `networkName`
when the release applies it live (`network.nad_name_live`: main, a migratable VMI; v1.9 always; v1.8 with
the `LiveUpdateNADRef` gate; v1.7 never). The VMI's interfaces and networks are patched as whole lists when
they changed."""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from instancetype_webhook.kubevirt.jsondata import clone_tree
from instancetype_webhook.kubevirt.liveupdate.network import nad_name_live
from instancetype_webhook.kubevirt.liveupdate.semantic import semantic_equal
from instancetype_webhook.kubevirt.releases import MAIN_PROFILE, ReleaseProfile

ABSENT: Final = "absent"
_ORDINAL: Final = re.compile(r"^net\d+$")


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _has_ordinal_ifaces(networks: list[dict[str, Any]], statuses: list[dict[str, Any]]) -> bool:
    """namescheme.HasOrdinalSecondaryIfaces: unknown naming (no pod interface name reported) counts as ordinal."""
    secondary = [n for n in networks if isinstance(n.get("multus"), dict) and not n["multus"].get("default")]
    if not secondary:
        return False
    by_name = {str(s.get("name", "")): s for s in statuses}
    for net in secondary:
        pod_name = by_name.get(str(net.get("name", "")), {}).get("podInterfaceName")
        if pod_name:
            return bool(_ORDINAL.match(str(pod_name)))
    return True


def synced_networks(vm_spec: dict[str, Any], vmi: dict[str, Any], release: ReleaseProfile = MAIN_PROFILE,
                    configuration: Mapping[str, Any] | None = None
                    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The VMI's (interfaces, networks) after syncVMIInterfaces for the VM template spec `vm_spec`."""
    vmi_spec = _obj(vmi.get("spec"))
    status_ifaces = _list(_obj(vmi.get("status")).get("interfaces"))
    ifaces = clone_tree(_list(_obj(_obj(vmi_spec.get("domain")).get("devices")).get("interfaces")))
    networks = clone_tree(_list(vmi_spec.get("networks")))
    ordinal = _has_ordinal_ifaces(networks, status_ifaces)
    vm_nets = {str(n.get("name", "")): n for n in _list(vm_spec.get("networks"))}
    for vm_iface in _list(_obj(_obj(vm_spec.get("domain")).get("devices")).get("interfaces")):
        name = str(vm_iface.get("name", ""))
        current = next((i for i in ifaces if i.get("name") == name), None)
        state = vm_iface.get("state", "")
        if current is None:
            if state != ABSENT and (vm_iface.get("bridge") is not None or vm_iface.get("sriov") is not None):
                networks.append(clone_tree(vm_nets.get(name, {})))
                ifaces.append(clone_tree(vm_iface))
        elif state != current.get("state", "") and current.get("state", "") != ABSENT \
                and not (ordinal and state == ABSENT):
            if state:
                current["state"] = state
            else:
                current.pop("state", None)
    reported = {str(s.get("name", "")) for s in status_ifaces}
    ifaces = [i for i in ifaces if i.get("state", "") != ABSENT or i.get("name") in reported]
    kept = {i.get("name") for i in ifaces}
    networks = [n for n in networks if n.get("name") in kept]
    if nad_name_live(vmi, release, configuration):
        for net in networks:
            vm_net = vm_nets.get(str(net.get("name", "")))
            if vm_net and isinstance(vm_net.get("multus"), dict) and isinstance(net.get("multus"), dict):
                net["multus"] = {**net["multus"], "networkName": vm_net["multus"].get("networkName", "")}
    return ifaces, networks


def network_patch(vm_spec: dict[str, Any], vmi: dict[str, Any], release: ReleaseProfile = MAIN_PROFILE,
                  configuration: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """`{path: value}` of what the synchronizer patches into the VMI (empty when nothing changes)."""
    ifaces, networks = synced_networks(vm_spec, vmi, release, configuration)
    vmi_spec = _obj(vmi.get("spec"))
    old_ifaces = _obj(_obj(vmi_spec.get("domain")).get("devices")).get("interfaces")
    if semantic_equal(old_ifaces, ifaces) and semantic_equal(vmi_spec.get("networks"), networks):
        return {}
    return {"spec.networks": networks, "spec.domain.devices.interfaces": ifaces}
