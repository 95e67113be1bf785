"""What the policy does to one stored VM, decided by /mutate's own function (`answer_vm`).

A stored VM is judged as the webhook would judge a write of it that changes nothing: an UPDATE whose
object and oldObject are both the stored VM. So `expand` leaves a VM whose status holds a
controllerRevisionRef (spec 4.5), `expandAll` flattens it, and a VM that would be denied is refused
with the very causes /mutate would answer.

Actions: flatten (with the patch's operation count and paths), refuse (causes), unresolved (a
reference that does not resolve), skip (the policy keeps it, and why), unchanged (no matcher: already
flat or never referenced one).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from instancetype_webhook.admission.answer import VMAnswer
from instancetype_webhook.admission.context import ReviewContext
from instancetype_webhook.admission.mutate import answer_vm
from instancetype_webhook.admission.policy import has_matcher
from instancetype_webhook.kubevirt.source import SourceUnavailable

ACTIONS = ("flatten", "refuse", "skip", "unresolved", "unchanged")


@dataclass
class Finding:
    namespace: str
    name: str
    action: str
    ops: int = 0
    fields: list[str] = field(default_factory=list)
    causes: list[dict[str, Any]] = field(default_factory=list)
    reason: str = ""
    policy: str = ""
    warnings: list[str] = field(default_factory=list)
    running: bool = False  # a VMI exists: the flat spec applies at its next start
    uid: str = ""  # metadata.uid (policy reports and events refer to the VM by it; not in the JSON output)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        del out["uid"]
        return out

    def reference(self) -> dict[str, Any]:
        """to_dict() with the uid: what policy reports and events are built from."""
        return {**self.to_dict(), "uid": self.uid}


def _meta(vm: dict[str, Any]) -> dict[str, Any]:
    meta = vm.get("metadata")
    return meta if isinstance(meta, dict) else {}


RUNNING_NOTE = ("running: the VMI keeps running unchanged, the flat spec applies at its next start "
                "(virt-controller may mark it RestartRequired, see the README)")


def is_running(vm: dict[str, Any]) -> bool:
    """A VMI exists for the VM (`status.created`, or a printable status of a live VMI)."""
    status = vm.get("status")
    if not isinstance(status, dict):
        return False
    return status.get("created") is True or status.get("printableStatus") in ("Starting", "Running", "Migrating",
                                                                              "Paused", "Stopping")


def assess(vm: dict[str, Any], ctx: ReviewContext) -> tuple[Finding, VMAnswer | None]:
    """The finding for a stored VM, and /mutate's answer behind it (None when there is no matcher)."""
    meta = _meta(vm)
    namespace, name = str(meta.get("namespace") or "default"), str(meta.get("name") or "")
    uid = str(meta.get("uid") or "")
    spec = vm.get("spec")
    if not isinstance(spec, dict) or not has_matcher(spec):
        return Finding(namespace, name, "unchanged", reason="no instancetype or preference matcher", uid=uid), None
    try:
        answer = answer_vm(vm, vm, "UPDATE", namespace, ctx)
    except SourceUnavailable as exc:  # one VM's failure is reported, not fatal
        return Finding(namespace, name, "failed", reason=exc.reason, uid=uid), None
    except Exception as exc:  # noqa: BLE001 (a bug on one VM's data: reported on that VM, the sweep goes on)
        return Finding(namespace, name, "failed", reason=f"{type(exc).__name__}: {exc}", uid=uid), None
    finding = Finding(namespace, name, "skip", policy=answer.policy, warnings=list(answer.verdict.warnings), uid=uid)
    if answer.action == "deny":
        verdict = answer.verdict
        finding.reason = str(verdict.message or "")
        finding.causes = [c.to_dict() for c in verdict.causes]
        unresolved = answer.error is not None and answer.error.kind == "notFound"
        finding.action = "unresolved" if unresolved else "refuse"
    elif answer.action == "patch":
        finding.action, finding.ops = "flatten", len(answer.ops)
        if is_running(vm):
            finding.running = True
            finding.warnings.append(RUNNING_NOTE)
        # status is KubeVirt's to write (the API server ignores it on a VM write): not a field that changes
        finding.fields = sorted({op["path"] for op in answer.ops if not op["path"].startswith("/status")})
        finding.reason = answer.why
    elif answer.flat is not None:
        finding.action, finding.reason = "unchanged", "flat already"
    else:
        finding.reason = answer.why
    return finding, answer
