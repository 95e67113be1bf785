"""Instance type GPUs and host devices (instancetype_webhook.kubevirt.apply.devices): replaced, never merged."""
from __future__ import annotations

import pytest

from instancetype_webhook.kubevirt.apply.devices import apply_gpus, apply_host_devices
from tests.kit.kubevirt import BASE, fields

STEPS = [(apply_gpus, "gpus"), (apply_host_devices, "hostDevices")]


@pytest.mark.parametrize("step, key", STEPS)
def test_the_list_is_copied_in_go_shape_beside_the_other_devices(step, key):
    wanted = [{"name": "a", "deviceName": "vendor.com/x", "tag": ""}]
    domain = {"devices": {"disks": [{"name": "root"}]}}
    assert step(BASE, {key: wanted}, domain) == []
    assert domain["devices"] == {"disks": [{"name": "root"}], key: [{"name": "a", "deviceName": "vendor.com/x"}]}
    assert wanted == [{"name": "a", "deviceName": "vendor.com/x", "tag": ""}]  # the instance type is untouched


@pytest.mark.parametrize("step, key", STEPS)
def test_a_vm_with_its_own_list_conflicts_and_keeps_it(step, key):
    domain = {"devices": {key: [{"name": "mine", "deviceName": "d"}]}}
    assert fields(step(BASE, {key: [{"name": "a", "deviceName": "d"}]}, domain)) == [f"{BASE}.domain.devices.{key}"]
    assert domain["devices"][key] == [{"name": "mine", "deviceName": "d"}]


@pytest.mark.parametrize("step, key", STEPS)
def test_an_empty_list_on_either_side_is_no_conflict(step, key):
    domain = {"devices": {key: []}}
    assert step(BASE, {key: [{"name": "a", "deviceName": "d"}]}, domain) == []
    assert domain["devices"][key] == [{"name": "a", "deviceName": "d"}]
    untouched = {"devices": {key: [{"name": "mine"}]}}
    assert step(BASE, {key: []}, untouched) == [] and step(BASE, {}, untouched) == []
    assert untouched == {"devices": {key: [{"name": "mine"}]}}
