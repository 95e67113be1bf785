"""admission/answer.py: the denial of a check-and-expand answer. A reference that does not resolve (or a bad
request) is the real reason even when validation objected; otherwise validation's answer comes first; a
conflict of the expansion alone is upstream's 422 with its causes; a VM allowed and expanded is not refused."""
from __future__ import annotations

from instancetype_webhook.admission.answer import VMAnswer, expansion_denial, refusal
from instancetype_webhook.kubevirt.causes import Cause, ExpandError, Verdict

SOCKETS = Cause("FieldValueInvalid", "VM field(s) spec.template.spec.domain.cpu.sockets conflicts",
                "spec.template.spec.domain.cpu.sockets")
MEMORY = Cause("FieldValueInvalid", "preference requires 2Gi", "spec.template.spec.domain.memory")


def test_a_conflict_with_causes_is_upstreams_422():
    verdict = expansion_denial(ExpandError("conflict", "conflicts", [SOCKETS]), "expand")
    assert (verdict.allowed, verdict.code, verdict.causes, verdict.message) == (False, 422, [SOCKETS], SOCKETS.message)


def test_a_missing_reference_says_why_it_must_resolve():
    verdict = expansion_denial(ExpandError("notFound", 'instancetype "big" not found'), "expandAll")
    assert not verdict.allowed and verdict.code == 400 and verdict.causes == []
    assert verdict.message == ('instancetype "big" not found: the expandAll reference policy stores VMs flat, '
                               "so the reference must resolve")


def test_other_errors_keep_their_message_as_a_400():
    verdict = expansion_denial(ExpandError("badRequest", "unknown kind Foo", [MEMORY]), "expand")
    assert (verdict.code, verdict.message, verdict.causes) == (400, "unknown kind Foo", [MEMORY])
    # a conflict without causes is a 400 with the message too
    assert expansion_denial(ExpandError("conflict", "odd"), "expand").code == 400


def test_allowed_and_expanded_is_not_refused():
    assert refusal(Verdict.allow(["w"]), None, "expand") is None


def test_validation_comes_first_unless_the_reference_does_not_resolve():
    denied = Verdict.deny([MEMORY])
    assert refusal(denied, None, "expand") is denied
    assert refusal(denied, ExpandError("conflict", "c", [SOCKETS]), "expand") is denied
    missing = refusal(denied, ExpandError("notFound", "not found"), "expand")
    assert missing is not denied and missing.code == 400 and "must resolve" in missing.message
    bad = refusal(denied, ExpandError("badRequest", "bad"), "expand")
    assert bad is not None and bad.message == "bad"


def test_an_allowed_vm_that_cannot_be_expanded_is_refused_with_the_expansion_error():
    verdict = refusal(Verdict.allow(), ExpandError("conflict", "c", [SOCKETS]), "expand")
    assert verdict is not None and verdict.code == 422 and verdict.causes == [SOCKETS]


def test_a_vm_answer_starts_without_patch():
    answer = VMAnswer("allow", Verdict.allow(), "reference")
    assert answer.ops == [] and answer.flat is None and answer.error is None and answer.why == ""
