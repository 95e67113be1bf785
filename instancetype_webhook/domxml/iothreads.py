"""IOThreads: how many (<iothreads>) and which one each virtio disk uses (shared pool, dedicated, supplemental)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from instancetype_webhook.domxml.conversion import Conversion
from instancetype_webhook.domxml.elements import Element, new
from instancetype_webhook.domxml.quantity import quantity_value


@dataclass
class IOThreadPlan:
    enabled: bool = False
    total: int = 0
    auto: int = 0
    supplemental: int = 0
    _next_auto: int = 1
    _next_dedicated: int = 1

    def thread_for(self, disk: dict[str, Any], bus: str) -> int | None:
        """The iothread of a disk (assigned in disk order, virtio disks only)."""
        if not self.enabled or self.supplemental or bus != "virtio":
            return None
        if disk.get("dedicatedIOThread"):
            thread = self._next_dedicated
            self._next_dedicated += 1
        else:
            thread = self._next_auto
            self._next_auto = self._next_auto % max(self.auto, 1) + 1
        return thread

    def pool_for(self, bus: str) -> list[int]:
        if self.enabled and self.supplemental and bus == "virtio":
            return list(range(1, self.supplemental + 1))
        return []


def plan_iothreads(conv: Conversion) -> IOThreadPlan:
    domain = conv.domain
    disks = conv.devices.get("disks") or []
    policy = domain.get("ioThreadsPolicy")
    if policy is None and not any(d.get("dedicatedIOThread") for d in disks):
        return IOThreadPlan()
    pool = (domain.get("ioThreads") or {}).get("supplementalPoolThreadCount")
    if policy == "supplementalPool" and pool is not None:
        return IOThreadPlan(enabled=True, total=int(pool), supplemental=int(pool))
    dedicated = sum(1 for d in disks if d.get("dedicatedIOThread"))
    auto = len(disks) - dedicated
    limit = _pool_limit(conv, policy)
    if auto + dedicated > limit:
        auto = max(limit - dedicated, 1)
    return IOThreadPlan(enabled=True, total=auto + dedicated, auto=auto, _next_dedicated=auto + 1)


def _pool_limit(conv: Conversion, policy: str | None) -> int:
    if policy in (None, "shared"):
        return 1
    if policy == "auto":
        if conv.isolate_emulator:
            return 1
        resources = conv.domain.get("resources") or {}
        cpus = 1
        if (resources.get("requests") or {}).get("cpu") is not None:
            cpus = quantity_value(resources["requests"]["cpu"])
        elif (resources.get("limits") or {}).get("cpu") is not None:
            cpus = quantity_value(resources["limits"]["cpu"])
        return cpus * 2
    return 0


def iothreads_element(plan: IOThreadPlan) -> Element | None:
    if not plan.enabled or plan.total <= 0:
        return None
    return new("iothreads", text=plan.total)
