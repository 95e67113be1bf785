"""The conformance runner: every case file of a directory through the library, compared with upstream's answers.

A case (format: shared/conformance/README.md) has sections, each checked by a registered *section check*:

- `expected`                       -> `app.kubevirt.expand.expand`
- `expectedValidate.instancetype`  -> `app.kubevirt.admission.validate_vm`
- `domxml`                         -> registered by `app.domxml.conformance` (a plugin module, see
                                      `PLUGIN_MODULES`), which calls `register_section`; without it the
                                      section is reported as not checked

A section check takes the whole case and returns None (match) or a `Difference`; it raises `NotChecked`
when it cannot check the section (for example no renderer exists yet). An unchecked section is reported
but never counts as a failure. Comparison follows the README: JSON semantically (map key order ignored,
list order significant), quantities by value, and for errors the kind and the set of cause fields first,
then the message texts.
"""
from __future__ import annotations

import importlib
import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, TextIO

from app.kubevirt.causes import Cause, ExpandError, Verdict
from app.kubevirt.quantity import QuantityError, parse
from app.kubevirt.configuration import settings_from_configuration
from app.kubevirt.settings import ClusterSettings
from app.kubevirt.source import (
    CLUSTER_INSTANCETYPE,
    CLUSTER_PREFERENCE,
    CONTROLLER_REVISION,
    INSTANCETYPE,
    PREFERENCE,
    InMemorySource,
)

INPUT_KINDS = {
    "instancetypes": INSTANCETYPE,
    "clusterInstancetypes": CLUSTER_INSTANCETYPE,
    "preferences": PREFERENCE,
    "clusterPreferences": CLUSTER_PREFERENCE,
    "controllerRevisions": CONTROLLER_REVISION,
}
# The public cases as a source checkout bundles them (tests/data/shared is an in-tree copy of ../shared).
BUNDLED_CASES = Path(__file__).resolve().parent.parent / "tests" / "data" / "shared" / "conformance"
# Modules that register extra section checks when imported (they call `register_section`).
PLUGIN_MODULES = ("app.domxml.conformance",)
_MISSING = object()


class NotChecked(Exception):
    """A section that cannot be checked (yet); the reason is shown, the case does not fail for it."""


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
    differences: list[tuple[str, Difference]] = field(default_factory=list)
    not_checked: list[tuple[str, str]] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.differences


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


def _causes(causes: Iterable[Cause]) -> list[dict[str, Any]]:
    return [cause.to_dict() for cause in causes]


def compare_causes(ours: list[dict[str, Any]], expected: list[dict[str, Any]], path: str) -> Difference | None:
    """Cause lists: the set of fields first, then each cause (reason, field, message) in order."""
    mine = sorted(c.get("field", "") for c in ours)
    theirs = sorted(c.get("field", "") for c in expected)
    if mine != theirs:
        return Difference(f"{path}[*].field", mine, theirs)
    return first_difference(ours, expected, path)


# -- building the inputs ------------------------------------------------------------------------------------


def case_source(case_input: dict[str, Any]) -> InMemorySource:
    """An in-memory source holding exactly the objects a case lists (kinds defaulted from the list they are in)."""
    vm = case_input.get("vm") or {}
    namespace = case_input.get("namespace") or (vm.get("metadata") or {}).get("namespace") or "default"
    source = InMemorySource(default_namespace=namespace)
    for key, kind in INPUT_KINDS.items():
        for obj in case_input.get(key) or []:
            source.add({**obj, "kind": obj.get("kind") or kind})
    return source


def case_settings(case_input: dict[str, Any]) -> ClusterSettings:
    """Cluster settings for a case: upstream's defaults unless the case gives `kubevirtConfiguration`."""
    return settings_from_configuration(case_input.get("kubevirtConfiguration"))


def case_vm(case: dict[str, Any]) -> dict[str, Any]:
    vm = json.loads(json.dumps(case["input"]["vm"]))
    namespace = case["input"].get("namespace")
    if namespace and not (vm.get("metadata") or {}).get("namespace"):
        vm.setdefault("metadata", {})["namespace"] = namespace
    return vm


# -- the built-in section checks ------------------------------------------------------------------------


def expand_answer(case: dict[str, Any]) -> dict[str, Any]:
    """Our answer to `expected`, in the case file's shape."""
    from app.kubevirt.expand import expand

    try:
        return {"vm": expand(case_vm(case), case_source(case["input"]), case_settings(case["input"]))}
    except ExpandError as exc:
        answer: dict[str, Any] = {"error": exc.message, "kind": exc.kind}
        if exc.causes:
            answer["causes"] = _causes(exc.causes)
        return answer


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
    return first_difference(ours["error"], expected.get("error"), "error")


def _outcome(answer: dict[str, Any]) -> str:
    return "the expanded VM" if "vm" in answer else f"{answer.get('kind')} error: {answer.get('error')}"


def verdict_answer(verdict: Verdict) -> dict[str, Any]:
    answer: dict[str, Any] = {"allowed": verdict.allowed}
    if not verdict.allowed:
        answer.update(message=verdict.message, code=verdict.code)
        if verdict.causes:
            answer["causes"] = _causes(verdict.causes)
    return answer


def validate_answer(case: dict[str, Any]) -> dict[str, Any]:
    from app.kubevirt.admission import validate_vm

    return verdict_answer(validate_vm(case_vm(case), case_source(case["input"]), case_settings(case["input"])))


def check_validate(case: dict[str, Any]) -> Difference | None:
    expected = case["expectedValidate"]["instancetype"]
    ours = validate_answer(case)
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


def check_domxml_unavailable(case: dict[str, Any]) -> Difference | None:
    raise NotChecked("no domain XML renderer registered yet (app.domxml.conformance)")


SECTIONS: dict[str, Section] = {}


def register_section(name: str, check: SectionCheck, applies: Callable[[dict[str, Any]], bool] | None = None) -> None:
    """Add (or replace) the check for a case section; `applies` defaults to "the case has that key"."""
    top = name.split(".")[0]
    SECTIONS[name] = Section(name, applies or (lambda case: top in case), check)


register_section("expected", check_expand)
register_section("expectedValidate.instancetype", check_validate, lambda case: "instancetype" in case.get("expectedValidate", {}))
register_section("domxml", check_domxml_unavailable)


def load_plugins(modules: Iterable[str] | None = None) -> None:
    """Import the modules that register extra section checks; a module that does not exist yet is skipped."""
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


def run_case(case: dict[str, Any], name: str) -> CaseResult:
    result = CaseResult(name)
    for section in SECTIONS.values():
        if not section.applies(case):
            continue
        try:
            diff = section.check(case)
        except NotChecked as exc:
            result.not_checked.append((section.name, str(exc)))
            continue
        except Exception as exc:  # a crash in our code is a failure of that case, never of the run
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


def run_cases(paths: Iterable[Path]) -> Iterator[CaseResult]:
    for path in paths:
        try:
            case = load_case(path)
        except (OSError, ValueError) as exc:
            yield CaseResult(path.stem, differences=[("file", Difference("<file>", str(exc), "a case"))])
            continue
        yield run_case(case, str(case.get("name") or path.stem))


def report(results: Iterable[CaseResult], out: TextIO, verbose: bool = False) -> tuple[int, int]:
    """Print one line per failing case (all cases with -v); return (passed, failed)."""
    passed = failed = 0
    unchecked: dict[str, tuple[int, str]] = {}
    checked: dict[str, int] = {}
    for result in results:
        for section in result.checked:
            checked[section] = checked.get(section, 0) + 1
        for section, reason in result.not_checked:
            count, _ = unchecked.get(section, (0, reason))
            unchecked[section] = (count + 1, reason)
        if result.passed:
            passed += 1
            if verbose:
                out.write(f"PASS {result.name} ({', '.join(result.checked) or 'nothing checked'})\n")
            continue
        failed += 1
        section, diff = result.differences[0]
        more = f" (+{len(result.differences) - 1} more section(s))" if len(result.differences) > 1 else ""
        out.write(f"FAIL {result.name} [{section}] {diff}{more}\n")
    for section, (count, reason) in sorted(unchecked.items()):
        out.write(f"{section}: not checked in {count} case(s): {reason}\n")
    if checked:
        out.write("sections checked: " + ", ".join(f"{name} {count}" for name, count in sorted(checked.items())) + "\n")
    out.write(f"{passed} passed, {failed} failed\n")
    return passed, failed


def run(directory: str | Path, out: TextIO, substring: str | None = None, verbose: bool = False) -> int:
    """Run a directory of cases; the exit status is 0 only when no case failed."""
    load_plugins()
    _, failed = report(run_cases(case_files(directory, substring)), out, verbose)
    return 1 if failed else 0
