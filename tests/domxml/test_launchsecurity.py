"""<launchSecurity> (domxml/launchsecurity.py): the SEV policy bits, SEV-SNP, TDX, and none off amd64."""
from __future__ import annotations

from instancetype_webhook.domxml.launchsecurity import launch_security_element
from tests.kit.domxml import assert_xml, conversion, make_vmi


def test_launch_security_sev_policy():
    conv = conversion(make_vmi({"launchSecurity": {"sev": {"policy": {"encryptedState": True}}}}))
    assert_xml(launch_security_element(conv), '<launchSecurity type="sev"><policy>0x5</policy></launchSecurity>')
    assert launch_security_element(conversion(make_vmi())) is None


def test_launch_security_sev_without_encrypted_state_and_with_session_data():
    conv = conversion(make_vmi({"launchSecurity": {"sev": {"dhCert": "CERT", "session": "SESSION"}}}))
    assert_xml(launch_security_element(conv), '<launchSecurity type="sev"><policy>0x1</policy>'
               '<dhCert>CERT</dhCert><session>SESSION</session></launchSecurity>')


def test_launch_security_snp_tdx_and_none_off_amd64():
    snp = conversion(make_vmi({"launchSecurity": {"snp": {}}}))
    assert_xml(launch_security_element(snp), '<launchSecurity type="sev-snp"><policy>0x30000</policy></launchSecurity>')
    tdx = conversion(make_vmi({"launchSecurity": {"tdx": {}}}))
    assert_xml(launch_security_element(tdx), '<launchSecurity type="tdx"/>')
    assert launch_security_element(conversion(make_vmi({"launchSecurity": {}}))) is None
    s390x = conversion(make_vmi({"launchSecurity": {"sev": {}}}, architecture="s390x"))
    assert launch_security_element(s390x) is None  # Secure Execution: iommu on the devices instead
