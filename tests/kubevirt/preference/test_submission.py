"""The preference effects written into the VM at submission (spec 2.7; kubevirt.preference.submission)."""
from __future__ import annotations

import copy

from instancetype_webhook.kubevirt.preference.submission import with_submission_preferences


def test_submission_effects():
    vm = {"spec": {"template": {"spec": {"domain": {}}}, "dataVolumeTemplates": [
        {"spec": {"pvc": {}, "storage": {"storageClassName": "mine"}}},
        {"spec": {"storage": {"storageClassName": None}}}]}}
    before = copy.deepcopy(vm)
    out = with_submission_preferences(vm,
                                      {"preferredArchitecture": "arm64", "machine": {"preferredMachineType": "virt"},
                                           "volumes": {"preferredStorageClassName": "fast"}})
    assert vm == before  # never changed in place
    assert out["spec"]["template"]["spec"]["architecture"] == "arm64"
    assert out["spec"]["template"]["spec"]["domain"]["machine"] == {"type": "virt"}
    assert out["spec"]["dataVolumeTemplates"] == [
        {"spec": {"pvc": {"storageClassName": "fast"}, "storage": {"storageClassName": "mine"}}},
        {"spec": {"storage": {"storageClassName": "fast"}}}]
    untouched = {"spec": {"template": {"spec": {"architecture": "s390x", "domain": {"machine": {"type": "q35"}}}},
                          "dataVolumeTemplates": [{"spec": {"storage": {"storageClassName": ""}}}]}}
    prefs = {"preferredArchitecture": "arm64", "machine": {"preferredMachineType": "virt"},
             "volumes": {"preferredStorageClassName": "fast"}}
    assert with_submission_preferences(untouched, prefs) is untouched  # set values (even "") are kept


def test_submission_without_template_only_touches_data_volume_templates():
    vm = {"spec": {"dataVolumeTemplates": [{"spec": {"pvc": {}}}]}}
    out = with_submission_preferences(vm,
                                      {"preferredArchitecture": "arm64", "machine": {"preferredMachineType": "virt"},
                                           "volumes": {"preferredStorageClassName": "fast"}})
    assert out == {"spec": {"dataVolumeTemplates": [{"spec": {"pvc": {"storageClassName": "fast"}}}]}}
    assert with_submission_preferences(vm, {"preferredArchitecture": "arm64"}) is vm
    assert with_submission_preferences(vm, None) is vm
