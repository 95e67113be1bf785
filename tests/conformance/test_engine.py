"""The member checks of the instance type engine (conformance/engine.py): our answers in the case file's shape
(verdicts, the mutator's and expand-vm-spec's metav1.Status) and each check on real cases, as they are and
altered. (The runner's report of these checks: tests/conformance/test_runner.py.)"""
import copy
import json

from instancetype_webhook.conformance import compare, engine
from instancetype_webhook.conformance.compare import Difference
from instancetype_webhook.kubevirt.causes import Cause, ExpandError, Verdict
from tests.kit.shared_data import CONFORMANCE

PASSING = "requirements.memory-unmet"
DENIED = "update.preference.name-changed-revision-kept"  # the mutator denies this UPDATE (a matcher check)
IGNORED = "infer.volume.containerdisk.ignore"  # expectedInfer without an instancetype matcher
CAUSE = Cause("FieldValueInvalid", "too small", "spec.instancetype")


def load(name: str) -> dict:
    return json.loads((CONFORMANCE / f"{name}.json").read_text())


def test_expansion_error_status_is_compared():
    case = next(c for c in map(load, (p.stem for p in sorted(CONFORMANCE.glob("conflicts.*.json")))))
    assert engine.check_expand(case) is None
    case["expected"]["status"]["reason"] = "Invalid"
    assert engine.check_expand(case) == compare.Difference("status.reason", "BadRequest", "Invalid")


def test_verdict_answer():
    assert engine.verdict_answer(Verdict.allow(["a warning"])) == {"allowed": True}
    assert engine.verdict_answer(Verdict.deny([CAUSE])) == {
        "allowed": False, "message": "too small", "code": 422,
        "causes": [{"reason": "FieldValueInvalid", "message": "too small", "field": "spec.instancetype"}]}
    assert engine.verdict_answer(Verdict(False, "no", 400)) == {"allowed": False, "message": "no", "code": 400}


def test_mutate_status_is_invalid_only_with_causes():
    assert engine.mutate_status(Verdict.deny([CAUSE])) == {
        "metadata": {}, "message": "too small", "code": 422, "reason": "Invalid",
        "details": {"causes": [CAUSE.to_dict()]}}
    assert engine.mutate_status(Verdict(False, "no", 400)) == {"metadata": {}, "message": "no", "code": 400}


def test_expand_status_is_a_bad_request():
    status = engine.expand_status(ExpandError("conflict", "it conflicts", [CAUSE]))
    assert status == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                      "message": "it conflicts", "reason": "BadRequest", "code": 400,
                      "details": {"causes": [CAUSE.to_dict()]}}
    assert "details" not in engine.expand_status(ExpandError("notFound", "gone"))


def test_compare_verdicts_allowed_then_code_then_causes_then_message():
    denied = {"allowed": False, "code": 422, "message": "too small", "causes": [CAUSE.to_dict()]}
    assert engine.compare_verdicts(denied, denied) is None
    assert engine.compare_verdicts({"allowed": True}, {"allowed": True, "message": "ignored"}) is None
    assert engine.compare_verdicts({"allowed": True}, denied).path == "allowed"
    assert engine.compare_verdicts(denied, {**denied, "code": 400, "message": "x"}) == Difference("code", 422, 400)
    other_field = {**denied, "causes": [{**CAUSE.to_dict(), "field": "spec.preference"}], "message": "x"}
    assert engine.compare_verdicts(denied, other_field).path == "causes[*].field"
    assert engine.compare_verdicts(denied, {**denied, "message": "x"}) == Difference("message", "too small", "x")


def test_every_check_passes_its_own_case():
    passing, denied = load(PASSING), load(DENIED)
    assert engine.check_expand(passing) is None and engine.check_validate(passing) is None
    assert engine.check_mutate(denied) is None and engine.check_expand(denied) is None
    assert engine.check_validate(denied) is None
    assert engine.check_infer(load(IGNORED)) is None


def test_an_altered_expansion_is_its_path_and_values():
    case = load(PASSING)
    case["expected"]["vm"]["spec"]["template"]["spec"]["domain"]["cpu"]["sockets"] = 7
    assert engine.check_expand(case) == Difference("vm.spec.template.spec.domain.cpu.sockets", 2, 7)


def test_an_error_where_a_vm_was_expected_is_the_result():
    case = load(PASSING)
    case["input"]["clusterInstancetypes"] = []
    diff = engine.check_expand(case)
    assert diff.path == "result" and diff.expected == "the expanded VM"
    assert diff.ours.startswith("notFound error: ")
    answer = engine.expand_answer(case)
    assert answer["kind"] == "notFound" and answer["status"]["code"] == 400


def test_the_mutators_denial_is_the_answer_of_every_member():
    case = load(DENIED)
    answer = engine.expand_answer(case)
    assert answer["kind"] == "mutate" and answer["status"]["code"] == 422
    assert engine.validate_answer(case) == engine.mutate_answer(case, with_matchers=False)
    assert not engine.validate_answer(case)["allowed"]
    wrong_kind = copy.deepcopy(case)
    wrong_kind["expected"]["kind"] = "badRequest"
    assert engine.check_expand(wrong_kind) == Difference("kind", "mutate", "badRequest")
    wrong_code = copy.deepcopy(case)
    wrong_code["expectedMutate"]["code"] = 400
    assert engine.check_mutate(wrong_code) == Difference("code", 422, 400)


def test_expected_infer_compares_the_matchers_the_mutator_leaves():
    case = load(PASSING)
    spec = case["input"]["vm"]["spec"]
    answer = engine.mutate_answer(case, with_matchers=True)
    assert answer == {"allowed": True, "instancetype": spec["instancetype"], "preference": spec["preference"]}
    assert engine.mutate_answer(case, with_matchers=False) == {"allowed": True}
    assert engine.check_infer({**case, "expectedInfer": answer}) is None
    renamed = {**answer, "instancetype": {**spec["instancetype"], "name": "other"}}
    assert engine.check_infer({**case, "expectedInfer": renamed}).path == "instancetype.name"
    absent = {"allowed": True, "preference": spec["preference"]}
    assert engine.check_infer({**case, "expectedInfer": absent}) == Difference("instancetype", spec["instancetype"],
                                                                               compare.MISSING)


def test_a_matcher_absent_on_both_sides_matches_and_present_on_one_does_not():
    case = load(IGNORED)
    assert "instancetype" not in case["expectedInfer"]
    case["expectedInfer"]["instancetype"] = {"name": "it-small"}
    assert engine.check_infer(case) == Difference("instancetype", compare.MISSING, {"name": "it-small"})


def test_an_altered_validation_cause_is_the_set_of_fields():
    case = load(PASSING)
    case["expectedValidate"]["instancetype"]["causes"][0]["field"] = "spec.preference"
    diff = engine.check_validate(case)
    assert diff.path == "causes[*].field" and diff.ours == ["spec.instancetype"]
    assert diff.expected == ["spec.preference"]
