"""Conflicts as causes and errors (instancetype_webhook.kubevirt.apply.conflicts)."""
from __future__ import annotations

from instancetype_webhook.kubevirt.apply.conflicts import (
    VM_BASE,
    VMI_BASE,
    annotation_conflict,
    conflict,
    conflict_message,
    conflicts_error,
)


def test_a_conflict_is_rooted_at_the_base():
    cause = conflict(VM_BASE, "domain", "cpu", "sockets")
    assert cause.to_dict() == {"reason": "FieldValueInvalid", "field": "spec.template.spec.domain.cpu.sockets",
                               "message": "VM field(s) spec.template.spec.domain.cpu.sockets conflicts with "
                                          "selected instance type"}
    assert conflict(VMI_BASE, "nodeSelector").field == "spec.nodeSelector"


def test_annotation_conflicts_have_no_base():
    cause = annotation_conflict("vm.kubevirt.io/os")
    assert cause.field == "annotations.vm.kubevirt.io/os"
    assert cause.message == "VM field(s) annotations.vm.kubevirt.io/os conflicts with selected instance type"
    assert conflict("", "x").field == "x"


def test_message_joins_paths_with_a_comma():
    assert conflict_message(["a"]) == "VM field(s) a conflicts with selected instance type"
    assert conflict_message(["a", "b", "c"]) == "VM field(s) a, b, c conflicts with selected instance type"


def test_conflicts_error_is_of_kind_conflict_with_one_cause_per_path():
    causes = [conflict(VM_BASE, "schedulerName"), annotation_conflict("k")]
    err = conflicts_error(causes)
    assert err.kind == "conflict" and err.causes == causes
    assert err.message == ("VM field(s) spec.template.spec.schedulerName, annotations.k "
                           "conflicts with selected instance type")
