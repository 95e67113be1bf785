"""Instance type launchSecurity (instancetype_webhook.kubevirt.apply.launchsecurity)."""
from __future__ import annotations

from instancetype_webhook.kubevirt.apply.launchsecurity import apply_launch_security
from tests.kit.kubevirt import BASE, fields


def test_copied_in_go_shape_when_the_vm_has_none():
    domain = {}
    assert apply_launch_security(BASE, {"launchSecurity": {"sev": {"session": "", "dhCert": "c"}}}, domain) == []
    assert domain == {"launchSecurity": {"sev": {"dhCert": "c"}}}


def test_any_vm_launch_security_conflicts_even_an_empty_one():
    domain = {"launchSecurity": {}}
    assert fields(apply_launch_security(BASE, {"launchSecurity": {"sev": {}}}, domain)) == [
        f"{BASE}.domain.launchSecurity"]
    assert domain == {"launchSecurity": {}}


def test_an_instancetype_without_it_changes_nothing():
    domain = {"launchSecurity": {"sev": {}}}
    assert apply_launch_security(BASE, {}, domain) == [] and domain == {"launchSecurity": {"sev": {}}}
    empty = {}
    assert apply_launch_security(BASE, {"launchSecurity": None}, empty) == [] and empty == {}
