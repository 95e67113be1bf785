"""Instance type IOThreads (upstream `apply/iothreads.go`, `iothreadpolicy.go`)."""
from __future__ import annotations

from typing import Any

from instancetype_webhook.kubevirt.apply.conflicts import conflict
from instancetype_webhook.kubevirt.causes import Cause


def apply_io_threads(base: str, itype: dict[str, Any], domain: dict[str, Any]) -> list[Cause]:
    count = (itype.get("ioThreads") or {}).get("supplementalPoolThreadCount")
    if count is None:
        return []
    current = domain.get("ioThreads") or {}
    if current.get("supplementalPoolThreadCount") is not None:
        return [conflict(base, "domain", "ioThreads", "supplementalPoolThreadCount")]
    domain["ioThreads"] = {**current, "supplementalPoolThreadCount": count}
    return []


def apply_io_threads_policy(base: str, itype: dict[str, Any], domain: dict[str, Any]) -> list[Cause]:
    policy = itype.get("ioThreadsPolicy")
    if policy is None:
        return []
    if domain.get("ioThreadsPolicy") is not None:
        return [conflict(base, "domain", "ioThreadsPolicy")]
    domain["ioThreadsPolicy"] = policy
    return []
