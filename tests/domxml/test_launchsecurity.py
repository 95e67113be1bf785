"""<launchSecurity> (domxml/launchsecurity.py): the SEV policy bits."""
from __future__ import annotations

from instancetype_webhook.domxml.launchsecurity import launch_security_element
from tests.kit.domxml import assert_xml, conversion, make_vmi


def test_launch_security_sev_policy():
    conv = conversion(make_vmi({"launchSecurity": {"sev": {"policy": {"encryptedState": True}}}}))
    assert_xml(launch_security_element(conv), '<launchSecurity type="sev"><policy>0x5</policy></launchSecurity>')
    assert launch_security_element(conversion(make_vmi())) is None
