"""What the admission layer answers for one VM write: allow it as is, deny it with a verdict, or patch it."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from instancetype_webhook.admission import envelope as rv
from instancetype_webhook.admission.policy import Policy
from instancetype_webhook.kubevirt.causes import ExpandError, Verdict

Action = Literal["allow", "deny", "patch"]


@dataclass(init=False)
class VMAnswer:
    """What /mutate answers for one VM write, before it is wrapped in an AdmissionReview response.

    `action`: "deny" (verdict holds the causes), "allow" (kept as is) or "patch" (ops turn the VM as
    received into `flat`, its expansion after the mutator stage, e.g. with inferred matchers). Audit and
    sweep (instancetype_webhook/fleet/) decide through this same function, so they cannot disagree.
    """

    action: Action
    verdict: Verdict
    policy: Policy
    why: str
    ops: list[dict[str, Any]]
    flat: dict[str, Any] | None
    error: ExpandError | None  # the expansion error behind a denial, if any

    # __init__ written out: the compiled build runs a dataclass's generated __init__ as Python (5x the cost)
    def __init__(self, action: Action, verdict: Verdict, policy: Policy, why: str = "",
                 ops: list[dict[str, Any]] | None = None, flat: dict[str, Any] | None = None,
                 error: ExpandError | None = None) -> None:
        self.action = action
        self.verdict = verdict
        self.policy = policy
        self.why = why
        self.ops = [] if ops is None else ops
        self.flat = flat
        self.error = error


def expansion_denial(exc: ExpandError, policy: str) -> Verdict:
    if exc.kind == "conflict" and exc.causes:
        return Verdict.deny(exc.causes)
    message = exc.message
    if exc.kind == "notFound":
        message = f"{message}: the {policy} reference policy stores VMs flat, so the reference must resolve"
    return rv.deny(message, 400, exc.causes)


def refusal(verdict: Verdict, exc: ExpandError | None, policy: str) -> Verdict | None:
    """The denial for a check_and_expand answer, or None when the VM may be stored flat.

    A reference that does not resolve is the real reason (validation ignored it); otherwise the
    validator's answer comes first, as /validate would give it."""
    if exc is not None and (verdict.allowed or exc.kind in ("notFound", "badRequest")):
        return expansion_denial(exc, policy)
    return None if verdict.allowed and exc is None else verdict
