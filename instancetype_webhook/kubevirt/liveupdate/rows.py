"""A plan as rows a person reads: one per changed field of the expanded template (now, after, what happens,
why). Pure: the expanded templates in, rows out.

Outcomes: `live` (patched into the running VMI, or needs no VMI change: a hotpluggable volume, a NIC the
synchronizer handles), `restart` (RestartRequired; the VMI keeps the old value until the VM restarts),
`refused` (the UPDATE is rejected), `retry` (a transient sync error: virt-controller retries later).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final

from instancetype_webhook.kubevirt.liveupdate.model import HOT_MEMORY_CHANGE, HOT_VCPU_CHANGE, Plan
from instancetype_webhook.kubevirt.liveupdate.semantic import normalize

LIVE: Final = "live"
RESTART: Final = "restart"
REFUSED: Final = "refused"
RETRY: Final = "retry"
# Subtrees shown as one row (their parts only make sense together).
_WHOLE: Final = ("affinity", "tolerations", "nodeSelector", "volumes", "networks", "domain.devices.interfaces",
                 "domain.devices.disks", "domain.resources.requests", "domain.resources.limits")


@dataclass(frozen=True)
class Row:
    field: str
    now: Any
    after: Any
    outcome: str
    why: str

    def to_dict(self) -> dict[str, Any]:
        return {"field": self.field, "now": self.now, "after": self.after, "outcome": self.outcome, "why": self.why}


def _leaves(value: Any, prefix: str, out: dict[str, Any]) -> None:
    if isinstance(value, dict) and prefix not in _WHOLE:
        for key, child in value.items():
            _leaves(child, f"{prefix}.{key}" if prefix else key, out)
    elif value is not None:
        out[prefix] = value


def changed_fields(before: dict[str, Any], after: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    """(dotted field, before, after) for every field that differs semantically, in field order."""
    old: dict[str, Any] = {}
    new: dict[str, Any] = {}
    _leaves(before, "", old)
    _leaves(after, "", new)
    out = []
    for field in sorted(set(old) | set(new)):
        if normalize(old.get(field), field.rsplit(".", 1)[-1]) != normalize(new.get(field), field.rsplit(".", 1)[-1]):
            out.append((field, old.get(field), new.get(field)))
    return out


def _patched(field: str, plan: Plan) -> bool:
    path = f"spec.{field}"
    return any(p == path or path.startswith(p + ".") or p.startswith(path + ".") for p in plan.vmi_patched)


def _live_why(field: str, plan: Plan) -> str:
    if not _patched(field, plan):
        return "no restart needed; nothing to patch in the running VMI"
    if field.startswith("domain.cpu") and HOT_VCPU_CHANGE in plan.conditions:
        return "hot-plugged: VMI patched, HotVCPUChange starts a live migration"
    if field.startswith("domain.memory") and HOT_MEMORY_CHANGE in plan.conditions:
        return "hot-plugged: VMI patched, HotMemoryChange starts a live migration"
    return "the running VMI is patched"


def outcome_rows(plan: Plan, before: dict[str, Any], after: dict[str, Any],
                 matchers: tuple[tuple[str, Any, Any], ...] = ()) -> list[Row]:
    """One Row per changed matcher and template field."""
    rows = [Row(field, now, new, *_decide_matcher(plan)) for field, now, new in matchers]
    for field, now, new in changed_fields(before, after):
        if field == "domain.firmware.uuid" and new is None:
            continue  # virt-controller's firmware synchronizer writes the VMI's uuid back
        rows.append(Row(field, now, new, *_decide(field, plan)))
    return rows


def _decide_matcher(plan: Plan) -> tuple[str, str]:
    if plan.refused:
        return REFUSED, str(plan.admission.message or "refused by the VM webhooks")
    if plan.sync_error is not None:
        return RETRY, f"{plan.sync_error.reason}: {plan.sync_error.message}"
    if plan.restart_required is not None:
        return RESTART, f"needs a restart: {plan.restart_required}"
    if plan.vmi_patched:
        return LIVE, "its values below go into the running VMI"
    return LIVE, "nothing in the expanded template changes"


def _decide(field: str, plan: Plan) -> tuple[str, str]:
    if plan.refused:
        return REFUSED, str(plan.admission.message or "refused by the VM webhooks")
    if _patched(field, plan):
        return LIVE, _live_why(field, plan)
    if plan.sync_error is not None:
        return RETRY, f"{plan.sync_error.reason}: {plan.sync_error.message}"
    if plan.restart_required is not None:
        return RESTART, f"needs a restart: {plan.restart_required}"
    return LIVE, _live_why(field, plan)


def show(value: Any, limit: int = 40) -> str:
    """A short one-line form of a value for the table."""
    if value is None:
        return "-"
    text = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"), sort_keys=True)
    return text if len(text) <= limit else text[: limit - 3] + "..."
