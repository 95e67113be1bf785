"""<clock> (domxml/clock.py): offset, timezone and timers."""
from __future__ import annotations

from instancetype_webhook.domxml.clock import clock_element
from tests.kit.domxml import assert_xml, conversion, make_vmi


def test_clock_utc_with_timers():
    vmi = make_vmi({"clock": {"utc": {"offsetSeconds": 30}, "timer": {
        "hpet": {"present": False}, "kvm": {}, "rtc": {"tickPolicy": "catchup", "track": "guest"}, "hyperv": {}}}})
    assert_xml(clock_element(conversion(vmi)), '<clock offset="utc" adjustment="30">'
               '<timer name="rtc" tickpolicy="catchup" present="yes" track="guest"/>'
               '<timer name="kvmclock" present="yes"/><timer name="hpet" present="no"/>'
               '<timer name="hypervclock" present="yes"/></clock>')


def test_clock_timezone_and_absent_clock():
    assert_xml(clock_element(conversion(make_vmi({"clock": {"timezone": "Europe/Paris"}}))),
               '<clock offset="timezone" timezone="Europe/Paris"/>')
    assert clock_element(conversion(make_vmi())) is None
