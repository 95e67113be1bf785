"""The conformance runner: every case file of a directory through the library, compared with upstream's answers.

A case (format: shared/conformance/README.md, bundled as tests/data/shared/conformance) has *members*, each
checked by a registered member check:

- `expectedInfer`, `expectedMutate`  -> `kubevirt.mutator.mutate_vm` (CREATE, or UPDATE with `oldVm`)
- `expected`                         -> `instancetype_webhook.kubevirt.expand.expand_vm_spec`
- `expectedValidate.instancetype`    -> `instancetype_webhook.kubevirt.admission.validate_vm`
- `domxml.expected`, `domxml.fromVm` -> registered by `instancetype_webhook.domxml.conformance` (a plugin module, see
                                        `PLUGIN_MODULES`), which calls `register_section`
- `expectedLiveUpdate`               -> registered by `instancetype_webhook.kubevirt.liveupdate.conformance` (a plugin)

When a case has `expectedInfer` or `expectedMutate`, the VM first goes through the mutator, as upstream's
API server does: `expected` and `expectedValidate.instancetype` start from the VM it leaves, and a denial
is the answer of both (`expected` then is a `mutate` error with upstream's metav1.Status).

A member check takes the whole case and returns None (match) or a `Difference`; it raises `NotChecked`
when it cannot check the member. A member without a registered check is not checked either: an unchecked
member is reported (the case counts as "not checked", never as passed) but never fails the run.
Comparison follows the README: JSON semantically (map key order ignored, list order significant),
quantities by value, and for errors the kind and the set of cause fields first, then the message texts.
"""
from __future__ import annotations

import importlib
import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from instancetype_webhook.kubevirt.causes import Cause, ExpandError, Verdict
from instancetype_webhook.kubevirt.configuration import settings_from_configuration
from instancetype_webhook.kubevirt.mutator import Mutation, mutate_vm
from instancetype_webhook.kubevirt.quantity import QuantityError, parse
from instancetype_webhook.kubevirt.settings import ClusterSettings
from instancetype_webhook.kubevirt.source import (
    CLUSTER_INSTANCETYPE,
    CLUSTER_PREFERENCE,
    CONTROLLER_REVISION,
    DATA_SOURCE,
    DATA_VOLUME,
    INSTANCETYPE,
    PERSISTENT_VOLUME_CLAIM,
    PREFERENCE,
    VOLUME_SNAPSHOT,
    InMemorySource,
)

# Every list of objects a case's `input` may hold, and the kind of its objects.
INPUT_KINDS = {
    "instancetypes": INSTANCETYPE,
    "clusterInstancetypes": CLUSTER_INSTANCETYPE,
    "preferences": PREFERENCE,
    "clusterPreferences": CLUSTER_PREFERENCE,
    "controllerRevisions": CONTROLLER_REVISION,
    # what inferFromVolume reads
    "persistentVolumeClaims": PERSISTENT_VOLUME_CLAIM,
    "dataVolumes": DATA_VOLUME,
    "dataSources": DATA_SOURCE,
    "volumeSnapshots": VOLUME_SNAPSHOT,
}
# The members of a case, in the order they are checked and reported.
MEMBERS = ("expectedInfer", "expectedMutate", "expected", "expectedValidate.instancetype", "domxml.expected",
           "domxml.fromVm", "expectedLiveUpdate")
# The public cases as a source checkout bundles them (tests/data/shared is an in-tree copy of ../shared).
BUNDLED_CASES = Path(__file__).resolve().parent.parent / "tests" / "data" / "shared" / "conformance"
# Modules that register extra member checks when imported (they call `register_section`).
PLUGIN_MODULES = ("instancetype_webhook.domxml.conformance", "instancetype_webhook.kubevirt.liveupdate.conformance")
_MISSING = object()


class NotChecked(Exception):
    """A member that cannot be checked (yet); the reason is shown, the case does not fail for it."""


@dataclass(frozen=True)
class Difference:
    """The first place where our answer and upstream's differ."""

    path: str
    ours: Any
    expected: Any
    note: str | None = None  # replaces "got ..., want ..." when the values are not worth printing

    def __str__(self) -> str:
        if self.note is not None:
            return f"{self.path}: {self.note}"
        return f"{self.path}: got {_short(self.ours)}, want {_short(self.expected)}"


SectionCheck = Callable[[dict[str, Any]], "Difference | None"]


@dataclass(frozen=True)
class Section:
    name: str
    applies: Callable[[dict[str, Any]], bool]
    check: SectionCheck


@dataclass
class CaseResult:
    name: str
    category: str = ""
    differences: list[tuple[str, Difference]] = field(default_factory=list)
    not_checked: list[tuple[str, str]] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.differences

    @property
    def outcome(self) -> str:
        """"failed" when a member differs, else "not checked" when a member was not checked, else "passed"."""
        if self.differences:
            return "failed"
        return "not checked" if self.not_checked else "passed"


# -- JSON comparison --------------------------------------------------------------------------------------


def _short(value: Any, limit: int = 160) -> str:
    if value is _MISSING:
        return "<absent>"
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _child(path: str, key: Any) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else str(key)


def same_quantity(ours: Any, expected: Any) -> bool:
    """Whether two scalars are the same Kubernetes quantity written differently (4Gi vs 4294967296)."""
    if isinstance(ours, bool) or isinstance(expected, bool):
        return False
    if not (isinstance(ours, str) or isinstance(expected, str)):
        return False
    if not all(isinstance(v, (str, int, float)) for v in (ours, expected)):
        return False
    try:
        return parse(ours).value == parse(expected).value
    except QuantityError:
        return False


def first_difference(ours: Any, expected: Any, path: str = "") -> Difference | None:
    """The first difference between two JSON values: maps by key, lists in order, quantities by value."""
    if isinstance(ours, dict) and isinstance(expected, dict):
        for key in sorted(set(ours) | set(expected), key=str):
            diff = first_difference(ours.get(key, _MISSING), expected.get(key, _MISSING), _child(path, key))
            if diff is not None:
                return diff
        return None
    if isinstance(ours, list) and isinstance(expected, list):
        for index in range(max(len(ours), len(expected))):
            mine = ours[index] if index < len(ours) else _MISSING
            theirs = expected[index] if index < len(expected) else _MISSING
            diff = first_difference(mine, theirs, _child(path, index))
            if diff is not None:
                return diff
        return None
    if ours is _MISSING or expected is _MISSING:
        return Difference(path, ours, expected)
    if type(ours) is not type(expected) and not (_is_number(ours) and _is_number(expected)):
        return None if same_quantity(ours, expected) else Difference(path, ours, expected)
    if ours == expected or same_quantity(ours, expected):
        return None
    return Difference(path, ours, expected)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def compare_causes(ours: list[dict[str, Any]], expected: list[dict[str, Any]], path: str) -> Difference | None:
    """Cause lists: the set of fields first, then each cause (reason, field, message) in order."""
    mine = sorted(c.get("field", "") for c in ours)
    theirs = sorted(c.get("field", "") for c in expected)
    if mine != theirs:
        return Difference(f"{path}[*].field", mine, theirs)
    return first_difference(ours, expected, path)


# -- building the inputs ------------------------------------------------------------------------------------


def case_namespace(case_input: Mapping[str, Any]) -> str:
    vm = case_input.get("vm") or {}
    return case_input.get("namespace") or (vm.get("metadata") or {}).get("namespace") or "default"


def case_source(case_input: dict[str, Any]) -> InMemorySource:
    """An in-memory source holding exactly the objects a case lists (kinds defaulted from the list they are in)."""
    source = InMemorySource(default_namespace=case_namespace(case_input))
    for key, kind in INPUT_KINDS.items():
        for obj in case_input.get(key) or []:
            source.add({**obj, "kind": obj.get("kind") or kind})
    return source


def case_settings(case_input: dict[str, Any]) -> ClusterSettings:
    """Cluster settings for a case: upstream's defaults unless the case gives `kubevirtConfiguration`."""
    return settings_from_configuration(case_input.get("kubevirtConfiguration"))


def _with_namespace(vm: Any, namespace: str | None) -> dict[str, Any]:
    copied: dict[str, Any] = json.loads(json.dumps(vm))  # a deep copy of the case's VM (an object)
    if namespace and isinstance(copied, dict) and not (copied.get("metadata") or {}).get("namespace"):
        copied.setdefault("metadata", {})["namespace"] = namespace
    return copied


def case_vm(case: dict[str, Any]) -> dict[str, Any]:
    """A copy of `input.vm` (in `input.namespace` when it names none)."""
    return _with_namespace(case["input"]["vm"], case["input"].get("namespace"))


def case_old_vm(case: dict[str, Any]) -> dict[str, Any] | None:
    """The stored VM of an UPDATE (`input.oldVm` when `input.operation` is UPDATE), else None (a CREATE)."""
    case_input = case["input"]
    if case_input.get("operation") != "UPDATE" or case_input.get("oldVm") is None:
        return None
    return _with_namespace(case_input["oldVm"], case_input.get("namespace"))


def goes_through_mutator(case: dict[str, Any]) -> bool:
    """Whether upstream's answers in the case start from the VM mutating webhook (README: expectedInfer/Mutate)."""
    return "expectedInfer" in case or "expectedMutate" in case


def case_mutation(case: dict[str, Any]) -> Mutation:
    """The VM mutating webhook's instancetype stage on the case's request."""
    return mutate_vm(case_vm(case), case_old_vm(case), case_source(case["input"]), case_settings(case["input"]))


def subject_vm(case: dict[str, Any]) -> dict[str, Any] | Verdict:
    """The VM that expansion and validation see, or the mutator's denial."""
    if not goes_through_mutator(case):
        return case_vm(case)
    mutation = case_mutation(case)
    return mutation.verdict if mutation.vm is None else mutation.vm


# -- answers in the case file's shapes ------------------------------------------------------------------


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
    from instancetype_webhook.kubevirt.expand import expand_vm_spec

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
    from instancetype_webhook.kubevirt.admission import validate_vm

    vm = subject_vm(case)
    if isinstance(vm, Verdict):  # the mutator's denial
        return verdict_answer(vm)
    return verdict_answer(validate_vm(vm, case_source(case["input"]), case_settings(case["input"])))


# -- the built-in member checks -------------------------------------------------------------------------


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
        diff = first_difference(ours.get(key, _MISSING), expected.get(key, _MISSING), key)
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


def unregistered(member: str) -> SectionCheck:
    """The placeholder check of a member nobody registered a check for: it is reported as not checked."""

    def check(case: dict[str, Any]) -> Difference | None:
        raise NotChecked(f"no check registered for {member}")

    return check


def check_domxml_unavailable(case: dict[str, Any]) -> Difference | None:
    raise NotChecked("no domain XML renderer registered yet (instancetype_webhook.domxml.conformance)")


SECTIONS: dict[str, Section] = {}


def _has_member(name: str) -> Callable[[dict[str, Any]], bool]:
    """Whether a case has the member `name` (a dotted path: `domxml.fromVm` is case["domxml"]["fromVm"])."""
    path = name.split(".")

    def applies(case: dict[str, Any]) -> bool:
        node: Any = case
        for key in path:
            if not isinstance(node, dict) or key not in node:
                return False
            node = node[key]
        return True

    return applies


def register_section(name: str, check: SectionCheck, applies: Callable[[dict[str, Any]], bool] | None = None) -> None:
    """Add (or replace) the check for a member; `applies` defaults to "the case has that member"."""
    SECTIONS[name] = Section(name, applies or _has_member(name), check)


register_section("expectedInfer", check_infer)
register_section("expectedMutate", check_mutate)
register_section("expected", check_expand)
register_section("expectedValidate.instancetype", check_validate)
register_section("domxml.expected", unregistered("domxml.expected"))
register_section("domxml.fromVm", unregistered("domxml.fromVm"))
register_section("expectedLiveUpdate", unregistered("expectedLiveUpdate"))


def load_plugins(modules: Iterable[str] | None = None) -> None:
    """Import the modules that register extra member checks; a module that does not exist yet is skipped."""
    for module in PLUGIN_MODULES if modules is None else modules:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name is None or not module.startswith(exc.name):
                raise


# -- running ---------------------------------------------------------------------------------------------


def case_files(directory: str | Path, substring: str | None = None) -> list[Path]:
    root = Path(directory)
    if not root.is_dir():
        raise NotADirectoryError(f"{root}: not a directory")
    files = sorted(p for p in root.glob("*.json") if p.is_file())
    return [p for p in files if substring is None or substring in p.stem]


def case_category(case: dict[str, Any], name: str) -> str:
    category = case.get("category")
    return category if isinstance(category, str) and category else name.split(".")[0]


def run_case(case: dict[str, Any], name: str) -> CaseResult:
    result = CaseResult(name, case_category(case, name))
    for section in SECTIONS.values():
        if not section.applies(case):
            continue
        try:
            diff = section.check(case)
        except NotChecked as exc:
            result.not_checked.append((section.name, str(exc)))
            continue
        except Exception as exc:  # a crash in our code is a failure of that member, never of the run
            diff = Difference("<exception>", f"{type(exc).__name__}: {exc}", "an answer")
        result.checked.append(section.name)
        if diff is not None:
            result.differences.append((section.name, diff))
    return result


def load_case(path: Path) -> dict[str, Any]:
    case = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(case, dict) or "input" not in case:
        raise ValueError(f"{path.name}: not a conformance case (no `input`)")
    return case


def run_cases(paths: Iterable[Path], category: str | None = None) -> Iterator[CaseResult]:
    for path in paths:
        try:
            case = load_case(path)
        except (OSError, ValueError) as exc:
            if category is None:
                yield CaseResult(path.stem, "<file>", differences=[("file", Difference("<file>", str(exc), "a case"))])
            continue
        name = str(case.get("name") or path.stem)
        if category is None or case_category(case, name) == category:
            yield run_case(case, name)


# -- reporting -------------------------------------------------------------------------------------------

OUTCOMES = ("passed", "failed", "not checked")


def _table(title: str, rows: dict[str, Counter[str]]) -> list[str]:
    width = max([len(title)] + [len(name) for name in rows])
    lines = [f"{title:<{width}}  {'passed':>6}  {'failed':>6}  {'not checked':>11}"]
    for name, counts in rows.items():
        lines.append(f"{name:<{width}}  {counts['passed']:>6}  {counts['failed']:>6}  {counts['not checked']:>11}")
    total = sum(rows.values(), Counter())
    lines.append(f"{'total':<{width}}  {total['passed']:>6}  {total['failed']:>6}  {total['not checked']:>11}")
    return lines


def tables(results: list[CaseResult]) -> list[str]:
    """Cases per category, then members, by outcome (a member is passed, failed or not checked)."""
    categories: dict[str, Counter[str]] = {}
    names = list(MEMBERS) + [s for s in SECTIONS if s not in MEMBERS]
    members: dict[str, Counter[str]] = {name: Counter() for name in names}
    for result in results:
        categories.setdefault(result.category, Counter())[result.outcome] += 1
        failed = {name for name, _ in result.differences}
        for name in result.checked:
            members.setdefault(name, Counter())["failed" if name in failed else "passed"] += 1
        for name, _ in result.not_checked:
            members.setdefault(name, Counter())["not checked"] += 1
    used = {name: counts for name, counts in members.items() if counts}
    return _table("category", dict(sorted(categories.items()))) + [""] + _table("member", used)


def report(results: Iterable[CaseResult], out: TextIO, verbose: bool = False) -> tuple[int, int]:
    """One line per failing case (all cases with -v), the unchecked members, the per-category and per-member
    tables, then `N passed, M failed` (`, K not checked` when members were not checked); returns (passed, failed)."""
    done = list(results)
    unchecked: dict[str, tuple[int, str]] = {}
    for result in done:
        for member, reason in result.not_checked:
            count, _ = unchecked.get(member, (0, reason))
            unchecked[member] = (count + 1, reason)
        if result.differences:
            member, diff = result.differences[0]
            more = f" (+{len(result.differences) - 1} more member(s))" if len(result.differences) > 1 else ""
            out.write(f"FAIL {result.name} [{member}] {diff}{more}\n")
        elif verbose:
            word = "PASS" if result.outcome == "passed" else "NOT CHECKED"
            unchecked_members = ", ".join(f"{m} not checked" for m, _ in result.not_checked)
            listed = ", ".join(filter(None, [", ".join(result.checked), unchecked_members])) or "nothing checked"
            out.write(f"{word} {result.name} ({listed})\n")
    for member, (count, reason) in sorted(unchecked.items()):
        out.write(f"{member}: not checked in {count} case(s): {reason}\n")
    if done:
        out.write("\n".join(tables(done)) + "\n")
    counts = Counter(result.outcome for result in done)
    tail = f", {counts['not checked']} not checked" if counts["not checked"] else ""
    out.write(f"{counts['passed']} passed, {counts['failed']} failed{tail}\n")
    return counts["passed"], counts["failed"]


def run(directory: str | Path, out: TextIO, substring: str | None = None, verbose: bool = False,
        category: str | None = None) -> int:
    """Run a directory of cases; the exit status is 0 only when no case failed."""
    load_plugins()
    _, failed = report(run_cases(case_files(directory, substring), category), out, verbose)
    return 1 if failed else 0
