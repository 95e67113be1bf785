"""<memory>, <maxMemory> and <memoryBacking>."""
from __future__ import annotations

from instancetype_webhook.domxml.conversion import Conversion
from instancetype_webhook.domxml.elements import Element, new, sub
from instancetype_webhook.domxml.quantity import quantity_bytes


def memory_elements(conv: Conversion) -> list[Element]:
    guest = conv.guest_memory
    elements = [new("memory", {"unit": "b"}, guest)]
    max_guest = conv.memory.get("maxGuest")
    if max_guest is not None and quantity_bytes(max_guest) != guest:
        elements.append(new("maxMemory", {"unit": "b", "slots": 0}, quantity_bytes(max_guest)))
    return elements


def memory_backing(conv: Conversion) -> Element | None:
    """hugepages (no size: per-node pages only come with NUMA passthrough), shared access, memfd."""
    hugepages = conv.memory.get("hugepages") is not None
    if not hugepages and not conv.shared_memory:
        return None
    backing = new("memoryBacking")
    if hugepages:
        sub(backing, "hugepages")
    if conv.memfd:
        sub(backing, "source", {"type": "memfd"})
    if conv.shared_memory:
        sub(backing, "access", {"mode": "shared"})
    return backing
