"""The member checks of the instance type engine: `expectedInfer`, `expectedMutate` (the VM mutator),
`expected` (expand-vm-spec) and `expectedValidate.instancetype` (the VM admitter)."""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from instancetype_webhook.conformance.cases import case_mutation, case_settings, case_source, subject_vm
from instancetype_webhook.conformance.compare import MISSING, Difference, compare_causes, first_difference
from instancetype_webhook.kubevirt.causes import Cause, ExpandError, Verdict
from instancetype_webhook.kubevirt.expand import expand_vm_spec
from instancetype_webhook.kubevirt.vm_webhook import validate_vm


def _causes(causes: Iterable[Cause]) -> list[dict[str, Any]]:
    return [cause.to_dict() for cause in causes]


def verdict_answer(verdict: Verdict) -> dict[str, Any]:
    """`{allowed, message?, code?, causes?}` as in `expectedValidate.instancetype` and `expectedMutate`."""
    answer: dict[str, Any] = {"allowed": verdict.allowed}
    if not verdict.allowed:
        answer.update(message=verdict.message, code=verdict.code)
        if verdict.causes:
            answer["causes"] = _causes(verdict.causes)
    return answer


def mutate_status(verdict: Verdict) -> dict[str, Any]:
    """The metav1.Status of a denial by the mutating webhook, as the API server answers it (README `mutate`)."""
    status: dict[str, Any] = {"metadata": {}, "message": verdict.message, "code": verdict.code}
    if verdict.causes:
        status.update(reason="Invalid", details={"causes": _causes(verdict.causes)})
    return status


def expand_status(exc: ExpandError) -> dict[str, Any]:
    """The metav1.Status that virt-api's `expand-vm-spec` endpoint answers for a failed expansion (HTTP 400)."""
    status: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                              "message": exc.message, "reason": "BadRequest", "code": 400}
    if exc.causes:
        status["details"] = {"causes": _causes(exc.causes)}
    return status


def mutate_answer(case: dict[str, Any], with_matchers: bool) -> dict[str, Any]:
    """Our answer to `expectedInfer` (with the matchers the webhook left) or `expectedMutate`."""
    mutation = case_mutation(case)
    answer = verdict_answer(mutation.verdict)
    if with_matchers and mutation.verdict.allowed and mutation.vm is not None:
        spec = mutation.vm.get("spec") or {}
        answer.update({key: spec[key] for key in ("instancetype", "preference") if spec.get(key) is not None})
    return answer


def expand_answer(case: dict[str, Any]) -> dict[str, Any]:
    """Our answer to `expected`, in the case file's shape."""
    vm = subject_vm(case)
    if isinstance(vm, Verdict):  # the mutator's denial
        denial = vm
        answer: dict[str, Any] = {"error": denial.message, "kind": "mutate", "status": mutate_status(denial)}
        if denial.causes:
            answer["causes"] = _causes(denial.causes)
        return answer
    try:
        return {"vm": expand_vm_spec(vm, case_source(case["input"]), case_settings(case["input"]))}
    except ExpandError as exc:
        answer = {"error": exc.message, "kind": exc.kind, "status": expand_status(exc)}
        if exc.causes:
            answer["causes"] = _causes(exc.causes)
        return answer


def validate_answer(case: dict[str, Any]) -> dict[str, Any]:
    """Our answer to `expectedValidate.instancetype` (the mutator's denial repeated when it denies)."""
    vm = subject_vm(case)
    if isinstance(vm, Verdict):  # the mutator's denial
        return verdict_answer(vm)
    return verdict_answer(validate_vm(vm, case_source(case["input"]), case_settings(case["input"])))


def compare_verdicts(ours: dict[str, Any], expected: dict[str, Any]) -> Difference | None:
    """allowed, then code, then the set of cause fields, the causes, and the message."""
    if ours["allowed"] != expected.get("allowed"):
        return Difference("allowed", ours, expected)
    if ours["allowed"]:
        return None
    if ours.get("code") != expected.get("code"):
        return Difference("code", ours.get("code"), expected.get("code"))
    diff = compare_causes(ours.get("causes", []), expected.get("causes", []), "causes")
    if diff is not None:
        return diff
    return first_difference(ours.get("message"), expected.get("message"), "message")


def check_infer(case: dict[str, Any]) -> Difference | None:
    expected = case["expectedInfer"]
    ours = mutate_answer(case, with_matchers=True)
    diff = compare_verdicts(ours, expected)
    if diff is not None or not ours["allowed"]:
        return diff
    for key in ("instancetype", "preference"):
        if key not in ours and key not in expected:  # absent on both sides (never there, or removed)
            continue
        diff = first_difference(ours.get(key, MISSING), expected.get(key, MISSING), key)
        if diff is not None:
            return diff
    return None


def check_mutate(case: dict[str, Any]) -> Difference | None:
    return compare_verdicts(mutate_answer(case, with_matchers=False), case["expectedMutate"])


def check_expand(case: dict[str, Any]) -> Difference | None:
    expected = case["expected"]
    ours = expand_answer(case)
    if ("vm" in ours) != ("vm" in expected):
        return Difference("result", _outcome(ours), _outcome(expected))
    if "vm" in expected:
        return first_difference(ours["vm"], expected["vm"], "vm")
    if ours["kind"] != expected.get("kind"):
        return Difference("kind", ours["kind"], expected.get("kind"))
    diff = compare_causes(ours.get("causes", []), expected.get("causes", []), "causes")
    if diff is not None:
        return diff
    diff = first_difference(ours["error"], expected.get("error"), "error")
    if diff is not None or "status" not in expected:
        return diff
    return first_difference(ours["status"], expected["status"], "status")


def _outcome(answer: dict[str, Any]) -> str:
    return "the expanded VM" if "vm" in answer else f"{answer.get('kind')} error: {answer.get('error')}"


def check_validate(case: dict[str, Any]) -> Difference | None:
    return compare_verdicts(validate_answer(case), case["expectedValidate"]["instancetype"])
