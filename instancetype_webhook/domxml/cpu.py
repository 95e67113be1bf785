"""<cpu> (mode, model, features, topology, synthetic NUMA cell), <vcpu> and the hotplug <vcpus> list."""
from __future__ import annotations

from typing import Final

from instancetype_webhook.domxml.conversion import Conversion
from instancetype_webhook.domxml.elements import Element, new, sub, yes_no

HOST_MODES: Final = ("host-model", "host-passthrough")


def max_topology(conv: Conversion) -> tuple[int, int, int]:
    """The domain topology: sockets widened to cpu.maxSockets when CPU hotplug is on."""
    sockets, cores, threads = conv.topology
    if conv.cpu.get("maxSockets") and conv.arch.cpu_hotplug:
        sockets = int(conv.cpu["maxSockets"])
    return sockets, cores, threads


def cpu_element(conv: Conversion) -> Element:
    model = conv.cpu.get("model") or "host-model"
    cpu = new("cpu", {"mode": model if model in HOST_MODES else "custom"})
    if model not in HOST_MODES:
        sub(cpu, "model", text=model)
    names = set()
    for feature in conv.cpu.get("features") or []:
        names.add(feature.get("name"))
        sub(cpu, "feature", {"name": feature.get("name"), "policy": feature.get("policy") or None})
    if conv.arch.mpx_validation and model not in HOST_MODES and "mpx" not in names:
        sub(cpu, "feature", {"name": "mpx", "policy": "disable"})
    sockets, cores, threads = max_topology(conv)
    sub(cpu, "topology", {"sockets": sockets, "cores": cores, "threads": threads})
    if conv.memfd and conv.cpu.get("numa") is None:
        numa = sub(cpu, "numa")
        total = sockets * cores * threads
        sub(numa, "cell", {"id": 0, "cpus": f"0-{total - 1}", "memory": conv.guest_memory // 1024, "unit": "KiB"})
    return cpu


def vcpu_elements(conv: Conversion) -> list[Element]:
    sockets, cores, threads = max_topology(conv)
    total = sockets * cores * threads
    elements = [new("vcpu", {"placement": "static"}, total)]
    if conv.cpu.get("maxSockets") and conv.arch.cpu_hotplug:
        vcpus = new("vcpus")
        current, first_socket = conv.vcpus, cores * threads
        for vcpu_id in range(total):
            sub(vcpus, "vcpu", {"id": vcpu_id, "enabled": yes_no(vcpu_id < current),
                                "hotpluggable": yes_no(vcpu_id >= first_socket)})
        elements.append(vcpus)
    return elements
