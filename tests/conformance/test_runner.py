"""The conformance runner on a temporary directory: every member of a case, altered and unreadable cases,
the mutator step, the per-category and per-member tables, the filters; and answering as a KubeVirt release:
every public case for v1.7.4, v1.8.4, v1.9.0 and main (the release's expected members from
conformance-releases/<R>/ overlaid on the base case), the overlay rules and the oracleError skips."""
import io
import json
import shutil

import pytest

from instancetype_webhook.conformance import compare, runner
from instancetype_webhook.conformance.compare import NotChecked
from instancetype_webhook.kubevirt.releases import resolve
from tests.kit.shared_data import CONFORMANCE

PASSING = "requirements.memory-unmet"
DENIED = "update.preference.name-changed-revision-kept"  # the mutator denies this UPDATE (a matcher check)
RELEASES = CONFORMANCE.parent / "conformance-releases"
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


def test_quantities_compare_by_value(cases):
    def change(case):
        case["expected"]["vm"]["spec"]["template"]["spec"]["domain"]["memory"]["guest"] = 1073741824

    altered(cases, PASSING, change)
    status, lines = run(cases)
    assert status == 0 and lines[-1] == "3 passed, 0 failed, 1 not checked"


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


# -- releases (was tests/test_conformance_releases.py) --------------------------------------------------


def _run(directory, release, **kw):
    out = io.StringIO()
    status = runner.run(directory, out, release=resolve(release), **kw)
    return status, out.getvalue()


@pytest.mark.parametrize(("release", "summary"), [
    ("main", "240 passed, 0 failed\n"),
    ("v1.9.0", "240 passed, 0 failed\n"),
    ("v1.8.4", "240 passed, 0 failed\n"),
    ("v1.7.4", "239 passed, 0 failed, 1 skipped (oracleError: the release cannot take the case)\n"),
])
def test_every_public_case_passes_as_each_release(release, summary):
    status, text = _run(CONFORMANCE, release)
    header = f"answering as KubeVirt {release} (profile {release[:4]})\n"
    assert text.startswith(header) is (release != "main")
    assert text.endswith(summary), text[-2000:]
    assert status == 0


# v1.8.4 answers differ from main's in these cases: answering as main against them must fail (the overlay is used).
@pytest.mark.parametrize(("case", "member"), [
    ("common-instancetype.rt1.micro.typical", "domxml.expected"),  # no NUMA <distances> before main
    ("common-preference.fedora.with-u1.large", "domxml.expected"),  # /usr/share/OVMF before v1.9
    ("common-preference.windows.7.virtio.preference-only", "expected"),  # preferredVideoType pruned
    ("revision.preference.legacy-v1alpha2-data", "expected"),  # register.go:43
])
def test_release_answers_differ_from_mains(tmp_path, case, member):
    cases = tmp_path / "conformance"
    cases.mkdir()
    shutil.copy(CONFORMANCE / f"{case}.json", cases)
    (tmp_path / "conformance-releases" / "main").mkdir(parents=True)  # a "release" whose answers are v1.8.4's
    shutil.copytree(RELEASES / "v1.8.4", tmp_path / "conformance-releases" / "v1.8.4")
    assert _run(cases, "v1.8.4")[0] == 0
    base = json.loads((cases / f"{case}.json").read_text())
    overlaid = runner.overlay(base, json.loads((RELEASES / "v1.8.4" / f"{case}.json").read_text()))
    (cases / f"{case}.json").write_text(json.dumps(overlaid))
    status, text = _run(cases, "main")
    assert status == 1 and f"FAIL {case} [{member}]" in text


def test_missing_overlay_file_means_the_base_answers_and_oracle_error_skips(tmp_path):
    cases = tmp_path / "conformance"
    cases.mkdir()
    for name in ("requirements.memory-unmet", "common-instancetype.rt1.micro.typical"):
        shutil.copy(CONFORMANCE / f"{name}.json", cases)
    answers = tmp_path / "conformance-releases" / "v1.9.0"
    answers.mkdir(parents=True)
    (answers / "requirements.memory-unmet.json").write_text(json.dumps({"oracleError": "v1.9 refuses it"}))
    status, text = _run(cases, "v1.9.0", verbose=True)
    # no answers file for the rt1 case: main's answers (with <distances>) are expected, v1.9.0 has none
    assert "FAIL common-instancetype.rt1.micro.typical [domxml.expected]" in text
    assert "SKIP requirements.memory-unmet (oracleError: v1.9 refuses it)" in text
    assert text.endswith("0 passed, 1 failed, 1 skipped (oracleError: the release cannot take the case)\n")
    assert status == 1


# -- the runner's pieces -------------------------------------------------------------------------------


def test_has_member_follows_a_dotted_path():
    applies = runner.has_member("domxml.fromVm")
    assert applies({"domxml": {"fromVm": {}}})
    assert not applies({"domxml": {"expected": {}}})
    assert not applies({"domxml": "not a map"})
    assert runner.has_member("expected")({"expected": None})  # present, even when empty
    assert runner.MEMBERS == ("expectedInfer", "expectedMutate", "expected", "expectedValidate.instancetype",
                              "domxml.expected", "domxml.fromVm", "expectedLiveUpdate")


def test_case_files_are_the_sorted_json_files_whose_name_holds_the_substring(tmp_path):
    for name in ("b.two.json", "a.one.json", "c.one.json", "notes.txt"):
        (tmp_path / name).write_text("{}")
    (tmp_path / "dir.json").mkdir()
    assert [p.name for p in runner.case_files(tmp_path)] == ["a.one.json", "b.two.json", "c.one.json"]
    assert [p.name for p in runner.case_files(tmp_path, "one")] == ["a.one.json", "c.one.json"]
    with pytest.raises(NotADirectoryError):
        runner.case_files(tmp_path / "a.one.json")


def test_category_is_the_cases_or_the_first_word_of_its_name():
    assert runner.case_category({"category": "update"}, "x.y") == "update"
    assert runner.case_category({}, "requirements.memory-unmet") == "requirements"
    assert runner.case_category({"category": ""}, "arch.arm64") == "arch"


def test_a_file_without_input_is_not_a_case(tmp_path):
    (tmp_path / "list.json").write_text("[]")
    (tmp_path / "other.json").write_text('{"name": "x"}')
    for name in ("list.json", "other.json"):
        with pytest.raises(ValueError, match="not a conformance case"):
            runner.load_case(tmp_path / name)


def test_outcome_skipped_then_failed_then_not_checked():
    diff = compare.Difference("a", 1, 2)
    assert runner.CaseResult("c").outcome == "passed"
    assert runner.CaseResult("c", not_checked=[("m", "why")]).outcome == "not checked"
    assert runner.CaseResult("c", differences=[("m", diff)], not_checked=[("m", "why")]).outcome == "failed"
    assert runner.CaseResult("c", differences=[("m", diff)], skipped="oracleError: x").outcome == "skipped"
    assert not runner.CaseResult("c", differences=[("m", diff)]).passed


def test_overlay_replaces_the_expected_members_only():
    case = {"input": {"vm": 1}, "expected": {"vm": "base"}, "expectedMutate": {"allowed": True},
            "domxml": {"input": {"vmi": "in"}, "expected": {"xml": "base"}, "fromVm": {"xml": "base"}}}
    answers = {"expected": {"vm": "release"}, "input": {"vm": 2}, "domxml": {"fromVm": {"error": "no"},
                                                                             "input": {"vmi": "other"}}}
    overlaid = runner.overlay(case, answers)
    assert overlaid["input"] == {"vm": 1} and overlaid["expectedMutate"] == {"allowed": True}
    assert overlaid["expected"] == {"vm": "release"}
    assert overlaid["domxml"] == {"input": {"vmi": "in"}, "expected": {"xml": "base"}, "fromVm": {"error": "no"}}
    assert case["expected"] == {"vm": "base"}  # the base case is left as it was


def test_release_dir_is_beside_the_cases_except_for_main(tmp_path):
    assert runner.release_dir(tmp_path / "conformance", resolve("main")) is None
    assert runner.release_dir(tmp_path / "conformance", resolve("v1.8.4")) == (
        tmp_path.resolve() / "conformance-releases" / "v1.8.4")
