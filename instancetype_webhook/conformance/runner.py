"""The conformance runner: every case file of a directory through the library, compared with upstream's answers.

A case (format: shared/conformance/README.md) has *members*, each checked by its member check (`SECTIONS`):

- `expectedInfer`, `expectedMutate`  -> `kubevirt.mutator.mutate_vm` (CREATE, or UPDATE with `oldVm`): engine.py
- `expected`                         -> `kubevirt.expand.expand_vm_spec`: engine.py
- `expectedValidate.instancetype`    -> `kubevirt.admission.validate_vm`: engine.py
- `domxml.expected`, `domxml.fromVm` -> the domain XML generator: domxml.py
- `expectedLiveUpdate`               -> the live-update planner: liveupdate.py

When a case has `expectedInfer` or `expectedMutate`, the VM first goes through the mutator, as upstream's
API server does: `expected` and `expectedValidate.instancetype` start from the VM it leaves, and a denial
is the answer of both (`expected` then is a `mutate` error with upstream's metav1.Status).

A member check takes the whole case and returns None (match) or a `Difference`; it raises `NotChecked`
when it cannot check the member: an unchecked member is reported (the case counts as "not checked", never as
passed) but never fails the run.
Comparison follows the README: JSON semantically (map key order ignored, list order significant),
quantities by value, and for errors the kind and the set of cause fields first, then the message texts.
"""
from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from instancetype_webhook.conformance import domxml, engine, liveupdate
from instancetype_webhook.conformance.cases import answering_as
from instancetype_webhook.conformance.compare import Difference, NotChecked
from instancetype_webhook.kubevirt.releases import MAIN_PROFILE, ReleaseProfile

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
    skipped: str | None = None  # why the release cannot take the case (its overlay's oracleError)

    @property
    def passed(self) -> bool:
        return not self.differences

    @property
    def outcome(self) -> str:
        """"failed" when a member differs, else "not checked" when a member was not checked, else "passed"."""
        if self.skipped is not None:
            return "skipped"
        if self.differences:
            return "failed"
        return "not checked" if self.not_checked else "passed"

def has_member(name: str) -> Callable[[dict[str, Any]], bool]:
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


def section(name: str, check: SectionCheck) -> Section:
    return Section(name, has_member(name), check)


# The members of a case and their checks, in the order they are checked and reported.
SECTIONS: tuple[Section, ...] = (
    section("expectedInfer", engine.check_infer),
    section("expectedMutate", engine.check_mutate),
    section("expected", engine.check_expand),
    section("expectedValidate.instancetype", engine.check_validate),
    section("domxml.expected", domxml.check_expected),
    section("domxml.fromVm", domxml.check_from_vm),
    section("expectedLiveUpdate", liveupdate.check_live_update),
)
MEMBERS = tuple(s.name for s in SECTIONS)


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


def run_case(case: dict[str, Any], name: str, sections: Iterable[Section] = SECTIONS) -> CaseResult:
    result = CaseResult(name, case_category(case, name))
    for section in sections:
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


# -- releases: the expected members of a release overlaid on the base case --------------------------------

OVERLAID = ("expectedInfer", "expectedMutate", "expected", "expectedValidate", "expectedLiveUpdate")
OVERLAID_DOMXML = ("expected", "fromVm")


def release_dir(directory: str | Path, release: ReleaseProfile) -> Path | None:
    """`DIR/../conformance-releases/<release>` for a release (None for main, whose answers are the base)."""
    if release.line == "main":
        return None
    return Path(directory).resolve().parent / "conformance-releases" / release.reported


def overlay(case: dict[str, Any], answers: dict[str, Any]) -> dict[str, Any]:
    """The case with the release's answers in place of the base case's (domxml: its expected members only)."""
    overlaid = {**case, **{m: answers[m] for m in OVERLAID if m in answers}}
    if isinstance(answers.get("domxml"), dict) and isinstance(case.get("domxml"), dict):
        overlaid["domxml"] = {**case["domxml"],
                              **{m: answers["domxml"][m] for m in OVERLAID_DOMXML if m in answers["domxml"]}}
    return overlaid


def release_case(case: dict[str, Any], path: Path, answers_dir: Path | None) -> dict[str, Any] | str:
    """The case as the release answers it, or why the release cannot take it (`oracleError`)."""
    answers_path = answers_dir / path.name if answers_dir is not None else None
    if answers_path is None or not answers_path.is_file():
        return case  # no answers of the release for this case: the base case's
    answers = json.loads(answers_path.read_text(encoding="utf-8"))
    if not isinstance(answers, dict):
        raise ValueError(f"{answers_path}: not an object")
    if "oracleError" in answers:
        return f"oracleError: {answers['oracleError']}"
    return overlay(case, answers)


def run_cases(paths: Iterable[Path], category: str | None = None, sections: Iterable[Section] = SECTIONS,
              answers_dir: Path | None = None) -> Iterator[CaseResult]:
    for path in paths:
        try:
            case = release_case(load_case(path), path, answers_dir)
        except (OSError, ValueError) as exc:
            if category is None:
                yield CaseResult(path.stem, "<file>", differences=[("file", Difference("<file>", str(exc), "a case"))])
            continue
        if isinstance(case, str):
            yield CaseResult(path.stem, path.stem.split(".")[0], skipped=case)
            continue
        name = str(case.get("name") or path.stem)
        if category is None or case_category(case, name) == category:
            yield run_case(case, name, sections)


# -- reporting -------------------------------------------------------------------------------------------

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
    members: dict[str, Counter[str]] = {name: Counter() for name in MEMBERS}
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
        if result.skipped is not None:
            if verbose:
                out.write(f"SKIP {result.name} ({result.skipped})\n")
            continue
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
    answered = [result for result in done if result.skipped is None]
    if answered:
        out.write("\n".join(tables(answered)) + "\n")
    counts = Counter(result.outcome for result in done)
    tail = f", {counts['not checked']} not checked" if counts["not checked"] else ""
    if counts["skipped"]:
        tail += f", {counts['skipped']} skipped (oracleError: the release cannot take the case)"
    out.write(f"{counts['passed']} passed, {counts['failed']} failed{tail}\n")
    return counts["passed"], counts["failed"]


def run(directory: str | Path, out: TextIO, substring: str | None = None, verbose: bool = False,
        category: str | None = None, sections: Iterable[Section] = SECTIONS,
        release: ReleaseProfile = MAIN_PROFILE) -> int:
    """Run a directory of cases as `release` (its answers from DIR/../conformance-releases/<release>); the
    exit status is 0 only when no case failed. NotADirectoryError when the release has no answers there."""
    answers_dir = release_dir(directory, release)
    if answers_dir is not None and not answers_dir.is_dir():
        raise NotADirectoryError(f"{answers_dir}: no answers of KubeVirt {release.reported} beside {directory}")
    files = case_files(directory, substring)
    if release != MAIN_PROFILE:  # main's report stays as it was before releases
        out.write(f"answering as {release.describe()}\n")
    with answering_as(release):
        _, failed = report(run_cases(files, category, list(sections), answers_dir), out, verbose)
    return 1 if failed else 0
