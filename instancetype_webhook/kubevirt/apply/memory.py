"""Instance type memory (upstream `apply/memory.go`): only the first conflict is reported; then
guest memory, the overcommit memory request (float32 maths), hugepages and maxGuest."""
from __future__ import annotations

from typing import Any

from instancetype_webhook.kubevirt.apply.conflicts import conflict
from instancetype_webhook.kubevirt.causes import Cause
from instancetype_webhook.kubevirt.goshape import HUGEPAGES, go_clone
from instancetype_webhook.kubevirt.quantity import canonical, overcommit_request, parse


def first_memory_conflict(base: str, itype_memory: dict[str, Any], domain: dict[str, Any]) -> Cause | None:
    memory = domain.get("memory") or {}
    resources = domain.get("resources") or {}
    if memory.get("guest") is not None:
        return conflict(base, "domain", "memory", "guest")
    if memory.get("hugepages") is not None and itype_memory.get("hugepages") is not None:
        return conflict(base, "domain", "memory", "hugepages")
    if memory.get("maxGuest") is not None and itype_memory.get("maxGuest") is not None:
        return conflict(base, "domain", "memory", "maxGuest")
    if "memory" in (resources.get("requests") or {}):
        return conflict(base, "domain", "resources", "requests", "memory")
    if "memory" in (resources.get("limits") or {}):
        return conflict(base, "domain", "resources", "limits", "memory")
    return None


def apply_memory(base: str, itype: dict[str, Any], domain: dict[str, Any]) -> list[Cause]:
    itype_memory = itype.get("memory") or {}
    found = first_memory_conflict(base, itype_memory, domain)
    if found is not None:
        return [found]
    memory = dict(domain.get("memory") or {})
    raw_guest = itype_memory.get("guest", 0)
    memory["guest"] = canonical(raw_guest)
    percent = int(itype_memory.get("overcommitPercent") or 0)
    if percent > 0:
        guest = parse(raw_guest)
        resources = dict(domain.get("resources") or {})
        resources["requests"] = {**(resources.get("requests") or {}), "memory": str(overcommit_request(guest, percent))}
        domain["resources"] = resources
    if itype_memory.get("hugepages") is not None:
        memory["hugepages"] = go_clone(itype_memory["hugepages"], HUGEPAGES)
    if itype_memory.get("maxGuest") is not None:
        memory["maxGuest"] = canonical(itype_memory["maxGuest"])
    domain["memory"] = memory
    return []
