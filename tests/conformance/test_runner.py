"""The conformance runner on a temporary directory: every member of a case, altered and unreadable cases,
the mutator step, the per-category and per-member tables, the filters."""
import copy
import io
import json
import shutil

import pytest

from instancetype_webhook.cli import main
from instancetype_webhook.conformance import cases as inputs
from instancetype_webhook.conformance import compare, engine, runner
from instancetype_webhook.conformance.compare import NotChecked
from tests.kit.shared_data import CONFORMANCE

PASSING = "requirements.memory-unmet"
DENIED = "update.preference.name-changed-revision-kept"  # the mutator denies this UPDATE (a matcher check)
WITH_DOMXML = next(p.stem for p in sorted(CONFORMANCE.glob("*.json")) if "domxml" in json.loads(p.read_text()))


def load(name: str) -> dict:
    return json.loads((CONFORMANCE / f"{name}.json").read_text())


def not_checked(member: str):
    def check(case):
        raise NotChecked(f"no check for {member} here")

    return check


# The runner itself is under test: the domxml members are not checked here (tests/domxml checks them).
SECTIONS = [s if not s.name.startswith("domxml.") else runner.section(s.name, not_checked(s.name))
            for s in runner.SECTIONS]


@pytest.fixture()
def cases(tmp_path):
    for name in (PASSING, WITH_DOMXML, DENIED):
        shutil.copy(CONFORMANCE / f"{name}.json", tmp_path / f"{name}.json")
    return tmp_path


def altered(tmp_path, name, change):
    case = load(name)
    change(case)
    case["name"] = name + ".altered"
    (tmp_path / f"{name}.altered.json").write_text(json.dumps(case))


def run(directory, *extra, **options):
    out = io.StringIO()
    options.setdefault("sections", SECTIONS)
    status = runner.run(directory, out, *extra, **options)
    return status, out.getvalue().splitlines()


def failing(lines):
    return [line for line in lines if line.startswith("FAIL")]


def test_passing_cases_and_members_that_cannot_be_checked(cases):
    status, lines = run(cases)
    assert status == 0
    assert lines[-1] == "2 passed, 0 failed, 1 not checked"
    assert "domxml.expected: not checked in 1 case(s): no check for domxml.expected here" in lines
    assert "domxml.fromVm: not checked in 1 case(s): no check for domxml.fromVm here" in lines


def test_tables_per_category_and_per_member(cases):
    _, lines = run(cases)
    (start,) = [i for i, line in enumerate(lines) if line.split() == ["category", "passed", "failed", "not", "checked"]]
    category = {row.split()[0]: row.split()[1:] for row in lines[start + 1:lines.index("", start)]}
    assert category[load(PASSING)["category"]] == ["1", "0", "0"]
    assert category["update"] == ["1", "0", "0"]
    assert category[load(WITH_DOMXML)["category"]] == ["0", "0", "1"]
    assert category["total"] == ["2", "0", "1"]
    members = {row.split()[0]: row.split()[1:] for row in lines[lines.index("", start) + 2:-1]}
    assert members["expectedMutate"] == ["1", "0", "0"]
    assert members["expected"] == ["3", "0", "0"]
    assert members["domxml.expected"] == ["0", "0", "1"] and members["domxml.fromVm"] == ["0", "0", "1"]
    assert "expectedInfer" not in members  # no case here has it


def test_altered_expansion_is_reported_with_path_and_values(cases):
    def change(case):
        case["expected"]["vm"]["spec"]["template"]["spec"]["domain"]["cpu"]["sockets"] = 7

    altered(cases, PASSING, change)
    status, lines = run(cases)
    assert status == 1
    assert lines[-1] == "2 passed, 1 failed, 1 not checked"
    assert failing(lines) == [
        f"FAIL {PASSING}.altered [expected] vm.spec.template.spec.domain.cpu.sockets: got 2, want 7"]


def test_altered_validation_message_is_reported(cases):
    def change(case):
        case["expectedValidate"]["instancetype"]["causes"][0]["field"] = "spec.preference"

    altered(cases, PASSING, change)
    status, lines = run(cases)
    assert status == 1
    (line,) = failing(lines)
    assert "[expectedValidate.instancetype] causes[*].field" in line
    assert '["spec.instancetype"]' in line and '["spec.preference"]' in line


def test_error_where_a_vm_was_expected(cases):
    def change(case):
        case["input"]["clusterInstancetypes"] = []

    altered(cases, PASSING, change)
    _, lines = run(cases)
    (line,) = failing(lines)
    assert line.startswith(f"FAIL {PASSING}.altered [expected] result: got \"notFound error: ")
    assert 'want "the expanded VM"' in line


def test_expansion_error_status_is_compared():
    case = next(c for c in map(load, (p.stem for p in sorted(CONFORMANCE.glob("conflicts.*.json")))))
    assert engine.check_expand(case) is None
    case["expected"]["status"]["reason"] = "Invalid"
    assert engine.check_expand(case) == compare.Difference("status.reason", "BadRequest", "Invalid")


@pytest.mark.parametrize("member, change, where", [
    ("expectedMutate", lambda c: c["expectedMutate"].update(code=400), "code: got 422, want 400"),
    ("expected", lambda c: c["expected"]["status"].update(code=400), "status.code: got 422, want 400"),
    ("expected", lambda c: c["expected"].update(kind="badRequest"), 'kind: got "mutate", want "badRequest"'),
    ("expectedValidate.instancetype", lambda c: c["expectedValidate"]["instancetype"].update(message="x"),
     "message: got"),
])
def test_mutator_denial_answers_every_member(cases, member, change, where):
    altered(cases, DENIED, change)
    status, lines = run(cases)
    (line,) = failing(lines)
    assert line.startswith(f"FAIL {DENIED}.altered [{member}] {where}"), line


def test_update_is_checked_as_an_update(cases):
    def as_create(case):
        del case["input"]["operation"]

    altered(cases, DENIED, as_create)
    _, lines = run(cases)
    (line,) = failing(lines)
    assert line.startswith(f"FAIL {DENIED}.altered [expectedMutate] allowed: got {{\"allowed\": true}}")
    assert "(+2 more member(s))" in line  # expected and expectedValidate.instancetype follow the mutator


def test_expected_infer_compares_the_matchers_the_mutator_leaves(cases):
    spec = load(PASSING)["input"]["vm"]["spec"]
    matcher, preference = spec["instancetype"], spec["preference"]
    answer = {"allowed": True, "instancetype": matcher, "preference": preference}
    altered(cases, PASSING, lambda c: c.update(expectedInfer=answer))
    assert failing(run(cases)[1]) == []
    altered(cases, PASSING, lambda c: c.update(expectedInfer={**answer, "instancetype": {**matcher, "name": "other"}}))
    (line,) = failing(run(cases)[1])
    assert line.startswith(f"FAIL {PASSING}.altered [expectedInfer] instancetype.name: got ")
    altered(cases, PASSING, lambda c: c.update(expectedInfer={"allowed": True, "preference": preference}))
    (line,) = failing(run(cases)[1])
    assert f"[expectedInfer] instancetype: got {json.dumps(matcher, sort_keys=True)}, want <absent>" in line


def test_expected_infer_matcher_absent_on_both_sides_matches(cases):
    # Ignore removed the matcher (or it was never there): absent in our answer and upstream's
    name = "infer.volume.containerdisk.ignore"
    shutil.copy(CONFORMANCE / f"{name}.json", cases / f"{name}.json")
    assert "instancetype" not in load(name)["expectedInfer"]
    assert failing(run(cases)[1]) == []
    altered(cases, name, lambda c: c["expectedInfer"].update(instancetype={"name": "it-small"}))
    (line,) = failing(run(cases)[1])
    assert f"FAIL {name}.altered [expectedInfer] instancetype: got <absent>" in line


def test_case_source_holds_every_input_list():
    case_input = {"vm": {"metadata": {"namespace": "ns"}}, **{key: [{"metadata": {"name": f"o-{key}"}}]
                                                              for key in inputs.INPUT_KINDS}}
    source = inputs.case_source(case_input)
    for key, kind in inputs.INPUT_KINDS.items():
        if kind == "ControllerRevision":
            assert source.get_revision(f"o-{key}", "ns") is not None
        else:
            assert source.get(kind, f"o-{key}", "ns") == {"metadata": {"name": f"o-{key}"}, "kind": kind}


def test_old_vm_only_for_an_update():
    case = load(DENIED)
    assert inputs.case_old_vm(case) == case["input"]["oldVm"]
    create = copy.deepcopy(case)
    create["input"]["operation"] = "CREATE"
    assert inputs.case_old_vm(create) is None


def test_quantities_compare_by_value(cases):
    def change(case):
        case["expected"]["vm"]["spec"]["template"]["spec"]["domain"]["memory"]["guest"] = 1073741824

    altered(cases, PASSING, change)
    status, lines = run(cases)
    assert status == 0 and lines[-1] == "3 passed, 0 failed, 1 not checked"


def test_list_order_is_significant():
    assert compare.first_difference([1, 2], [2, 1]) == compare.Difference("[0]", 1, 2)
    assert compare.first_difference({"a": 1, "b": 2}, {"b": 2, "a": 1}) is None
    assert compare.first_difference("4Gi", "4294967296") is None
    assert compare.first_difference("1", "one") is not None


def test_filter_by_name_and_verbose(cases):
    status, lines = run(cases, "memory-unmet", True)
    assert lines[0] == f"PASS {PASSING} (expected, expectedValidate.instancetype)"
    assert lines[-1] == "1 passed, 0 failed"
    status, lines = run(cases, None, True)
    assert f"NOT CHECKED {WITH_DOMXML} (expected, expectedValidate.instancetype, domxml.expected not checked, " \
           "domxml.fromVm not checked)" in lines


def test_filter_by_category(cases):
    status, lines = run(cases, category="update")
    assert status == 0 and lines[-1] == "1 passed, 0 failed"
    assert run(cases, category="no-such-category")[1][-1] == "0 passed, 0 failed"


def test_unreadable_case_fails_without_stopping_the_run(cases):
    (cases / "broken.json").write_text("{not json")
    status, lines = run(cases)
    assert status == 1 and lines[-1] == "2 passed, 1 failed, 1 not checked"
    assert any(line.startswith("FAIL broken [file]") for line in lines)


def test_a_member_check_answers_for_its_member(cases):
    seen = []

    def check(case):
        seen.append(case["name"])
        return compare.Difference("domxml.xml", "<domain/>", "<domain type='kvm'/>")

    sections = [s if s.name != "domxml.expected" else runner.section(s.name, check) for s in SECTIONS]
    status, lines = run(cases, sections=sections)
    assert seen == [WITH_DOMXML] and status == 1
    assert any(line.startswith(f"FAIL {WITH_DOMXML} [domxml.expected] domxml.xml") for line in lines)


def test_a_crashing_check_fails_its_member_only(cases):
    sections = [s if s.name != "domxml.fromVm" else runner.section(s.name, lambda case: 1 / 0) for s in SECTIONS]
    status, lines = run(cases, sections=sections)
    assert failing(lines) == [f"FAIL {WITH_DOMXML} [domxml.fromVm] <exception>: got \"ZeroDivisionError: division by "
                              "zero\", want \"an answer\""]


def test_the_real_domxml_checks_pass_the_case(cases):
    status, lines = run(cases, sections=runner.SECTIONS)
    assert status == 0 and lines[-1] == "3 passed, 0 failed"


def test_cli_exit_status_and_filters(cases, capsys):
    assert main(["conformance", str(cases)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "3 passed, 0 failed"
    assert main(["conformance", str(cases), "--category", "update", "-k", "preference"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "1 passed, 0 failed"
    assert main(["conformance", str(cases / "nope")]) == 2


def test_cli_needs_a_directory(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["conformance"])
    assert exc.value.code == 2 and "DIR" in capsys.readouterr().err
