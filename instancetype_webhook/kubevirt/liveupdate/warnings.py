"""A plan as admission warnings (what the mutating webhook tells the user on an UPDATE of a running VM),
e.g. "CPU sockets 2 -> 4 will be hot-plugged" or "needs a restart: <upstream's message>". Pure."""
from __future__ import annotations

from typing import Any, Final

from instancetype_webhook.kubevirt.liveupdate.model import Plan
from instancetype_webhook.kubevirt.quantity import QuantityError, canonical

PREFIX: Final = "live update: "
_NAMES: Final = {
    "spec.domain.cpu.sockets": ("CPU sockets", "hot-plugged"),
    "spec.domain.memory.guest": ("guest memory", "hot-plugged"),
    "spec.nodeSelector": ("nodeSelector", "updated on the running VMI"),
    "spec.affinity": ("affinity", "updated on the running VMI"),
    "spec.tolerations": ("tolerations", "updated on the running VMI"),
    "spec.domain.devices.interfaces": ("network interfaces", "hot-plugged or unplugged"),
    "spec.volumes": ("hotpluggable volumes", "hot-plugged or unplugged"),
}
_MISSING: Final = ("FailedFindInstancetype", "FailedFindPreference")


def _value_at(vmi: dict[str, Any], path: str) -> Any:
    node: Any = vmi
    for key in path.split("."):
        node = node.get(key) if isinstance(node, dict) else None
    return node


def _show(value: Any) -> str:
    if isinstance(value, str):
        try:
            return canonical(value)
        except QuantityError:
            return value
    return "-" if value is None else str(value)


def plan_warnings(plan: Plan, vmi: dict[str, Any]) -> list[str]:
    """The warnings for `plan`, made against the running VMI as it was before the plan (`vmi`)."""
    if plan.refused:
        return [f"{PREFIX}KubeVirt refuses this update: {plan.admission.message}"]
    out = []
    for path, (name, verb) in _NAMES.items():
        if path not in plan.vmi_patched:
            continue
        if path in ("spec.domain.cpu.sockets", "spec.domain.memory.guest"):
            now, after = _show(_value_at(vmi, path)), _show(plan.vmi_patched[path])
            out.append(f"{PREFIX}{name} {now} -> {after} will be {verb}")
        else:
            out.append(f"{PREFIX}{name} will be {verb}")
    if plan.restart_required is not None:
        out.append(f"{PREFIX}needs a restart: {plan.restart_required}")
    if plan.sync_error is not None and plan.sync_error.reason in _MISSING:
        out.append(f"{PREFIX}nothing changes, virt-controller reports {plan.sync_error.reason}: "
                   f"{plan.sync_error.message}")
    elif plan.sync_error is not None:
        out.append(f"{PREFIX}not applied yet, virt-controller retries: {plan.sync_error.message}")
    return out
