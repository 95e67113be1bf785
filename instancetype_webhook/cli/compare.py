"""`--compare-kubevirt-version R2` on `expand`, `validate`, `domxml` and `plan`: the what-if for one VM.

The command runs as it would (as the release `--kubevirt-version` or INSTANCETYPE_WEBHOOK_KUBEVIRT_VERSION
names, else its default) and again as R2, on the same inputs (stdin is read once), each run captured; the two
answers are reduced to `admission.whatif.Answer`s and only what differs is printed
(`admission.whatif.what_if`): the verdict, the causes, messages and warnings, the flat VM's fields (`expand`),
the domain XML lines (`domxml`), the plan's rows and summary (`plan`). `-o json` prints the comparison as JSON.
The exit status is the first release's; an input error in either run is printed (exit 2).
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
from collections.abc import Callable
from typing import Any, TextIO

from instancetype_webhook.admission.whatif import Answer, WhatIf, leaf_paths, what_if
from instancetype_webhook.cli.inputs import InputError, release_option
from instancetype_webhook.kubevirt.releases import ReleaseProfile

FLAG = "--compare-kubevirt-version"
INPUT_ERROR = 2
# What each command's captured run is turned into an Answer with (its output forced to the parseable form).
JSON_OUTPUT = {"expand": "json", "validate": "json", "plan": "json"}
Run = Callable[..., int]


def add_compare_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(FLAG, metavar="R2", dest="compare_kubevirt_version",
                        help="also answer as KubeVirt release R2 and print only what differs from the answer as "
                             "--kubevirt-version (a what-if before an upgrade; exit status: the first release's)")


def wanted(args: argparse.Namespace) -> bool:
    """Whether the command was asked for the what-if (then `run_compare` answers instead)."""
    return getattr(args, "compare_kubevirt_version", None) is not None


def _name(profile: ReleaseProfile | None, given: str) -> str:
    return profile.name if profile is not None else given


def _capture(command: str, run: Run, args: argparse.Namespace, version: str | None,
             stdin_text: str | None) -> tuple[int, str, str]:
    """One run of the command as release `version` (None: the flag was not given), its output captured."""
    changed: dict[str, Any] = {"compare_kubevirt_version": None, "kubevirt_version": version}
    if command in JSON_OUTPUT:
        changed["output"] = JSON_OUTPUT[command]
    for flag, value in (("diff", False), ("quiet", False)):
        if hasattr(args, flag):
            changed[flag] = value
    once = argparse.Namespace(**{**vars(args), **changed})
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin
    if stdin_text is not None:
        sys.stdin = io.StringIO(stdin_text)
    try:
        code = run(once, out, err)
    finally:
        sys.stdin = saved
    return int(code or 0), out.getvalue(), err.getvalue()


def _notes(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("note: ")]


def _said(err: str) -> tuple[str, tuple[str, ...]]:
    """(the first line that is not a note or warning, the causes and warnings) of a run's stderr."""
    lines = [line for line in err.splitlines() if not line.startswith("note: ")]
    verdict = next((line for line in lines if not line.startswith(("warning: ", "  "))), "")
    return verdict, tuple(line.strip() for line in lines if line != verdict)


def answer(command: str, release: str, code: int, out: str, err: str) -> Answer:
    """What one run answered, as an Answer (see the module docstring)."""
    verdict, said = _said(err)
    if command == "expand":
        fields = leaf_paths(json.loads(out)) if code == 0 and out.strip() else {}
        return Answer(release, verdict or ("expanded" if code == 0 else f"exit {code}"), said, fields)
    if command == "domxml":
        return Answer(release, verdict or ("domain XML printed" if code == 0 else f"exit {code}"), said,
                      lines=tuple(out.splitlines()))
    if command == "validate":
        if code == INPUT_ERROR or not out.strip():
            return Answer(release, verdict or f"exit {code}", said)
        payload = json.loads(out)
        verdicts, causes = [], list(said)
        for item in payload if isinstance(payload, list) else [payload]:
            status = item.get("status") or {}
            verdicts.append(f"{item['object']}: " + ("allowed" if item["allowed"] else
                                                    f"rejected ({status.get('code')}): {status.get('message')}"))
            causes += [f"{item['object']}: {c.get('field') or '<no field>'}: {c.get('message')} [{c.get('reason')}]"
                       for c in (status.get("details") or {}).get("causes") or []]
            causes += [f"{item['object']}: warning: {w}" for w in item.get("warnings") or []]
        return Answer(release, "; ".join(verdicts), tuple(causes))
    # plan
    if code == INPUT_ERROR or not out.strip():
        return Answer(release, verdict or f"exit {code}", said)
    plan = json.loads(out)
    outcome = {0: "live (or nothing changes)", 1: "refused", 3: "restart needed", 4: "retried"}.get(code, "")
    admission = plan.get("admission") or {}
    causes = [f"{c.get('field') or '<no field>'}: {c.get('message')}" for c in admission.get("causes") or []]
    causes += [f"RestartRequired: {plan['restartRequired']}"] if plan.get("restartRequired") else []
    causes += [f"VMI patch: {', '.join(sorted(plan.get('vmiPatched') or {}))}"] if plan.get("vmiPatched") else []
    causes += [f"VMI condition: {c}" for c in plan.get("conditions") or []]
    causes += [line for line in plan.get("notes") or [] if not line.startswith("note: answering as")]
    rows = {row["field"]: f"{row['outcome']}: {json.dumps(row['now'])} -> {json.dumps(row['after'])} "
                          f"({row['why']})" if row.get("why") else
                          f"{row['outcome']}: {json.dumps(row['now'])} -> {json.dumps(row['after'])}"
            for row in plan.get("fields") or []}
    return Answer(release, f"exit {code}: {outcome}".rstrip(": "), (*said, *causes), rows)


def run_compare(command: str, run: Run, args: argparse.Namespace, out: TextIO | None = None,
                err: TextIO | None = None) -> int:
    """The what-if: `run` as the release given and as R2; only what differs is printed; the first's exit."""
    out, err = out or sys.stdout, err or sys.stderr
    second_given: str = args.compare_kubevirt_version
    try:
        first_profile = release_option(getattr(args, "kubevirt_version", None),
                                       default="main" if command != "plan" or not getattr(args, "name", None)
                                       else "auto")
        second_profile = release_option(second_given, flag=FLAG)
    except InputError as exc:
        err.write(f"{command}: {exc}\n" if command == "plan" else f"error: {exc}\n")
        return INPUT_ERROR
    paths = [*(getattr(args, "filename", None) or []), *(getattr(args, "files", None) or []),
             *([args.new] if getattr(args, "new", None) else []), *([args.old] if getattr(args, "old", None) else [])]
    stdin_text = sys.stdin.read() if "-" in paths else None
    first_run = _capture(command, run, args, getattr(args, "kubevirt_version", None), stdin_text)
    second_run = _capture(command, run, args, second_given, stdin_text)
    for line in dict.fromkeys([*_notes(first_run[2]), *_notes(second_run[2])]):
        err.write(line + "\n")
    for (code, _, said), given in ((first_run, "the release given"), (second_run, FLAG)):
        if code == INPUT_ERROR:  # the answer cannot be compared: say why, as the command would
            err.write("".join(f"{line}\n" for line in said.splitlines() if not line.startswith("note: ")) or
                      f"{command}: no answer as {given}\n")
            return INPUT_ERROR
    first = answer(command, _name(first_profile, "auto"), *first_run)
    second = answer(command, _name(second_profile, "auto"), *second_run)
    with contextlib.suppress(BrokenPipeError):
        write(what_if(first, second), getattr(args, "output", None) == "json", out)
    return first_run[0]


def write(compared: WhatIf, as_json: bool, out: TextIO) -> None:
    out.write(json.dumps(compared.to_dict(), indent=2) + "\n" if as_json else compared.render())
    out.flush()
