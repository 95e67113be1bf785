"""The smaller devices (domxml/devices.py): inputs, channel, video, graphics, console, memballoon, rng, tpm,
watchdog, sound."""
from __future__ import annotations

import pytest

from instancetype_webhook.domxml import DomainError
from instancetype_webhook.domxml.devices import (
    channel_elements,
    console_elements,
    graphics_elements,
    input_elements,
    memballoon_element,
    rng_elements,
    sound_elements,
    tpm_elements,
    video_elements,
    watchdog_elements,
)
from tests.kit.domxml import FW_UUID, UID, assert_xml, conversion, make_vmi


def test_inputs_with_unsupported_bus_or_type_are_rejected():
    with pytest.raises(DomainError, match="unsupported bus ps2"):
        input_elements(conversion(make_vmi({"devices": {"inputs": [{"name": "k", "bus": "ps2"}]}})))
    with pytest.raises(DomainError, match="unsupported type keyboard"):
        input_elements(conversion(make_vmi({"devices": {"inputs": [{"name": "k", "type": "keyboard"}]}})))


def test_channel_video_graphics_console():
    conv = conversion(make_vmi())
    assert_xml(channel_elements(conv),
               '<channel type="unix"><target name="org.qemu.guest_agent.0" type="virtio"/></channel>')
    assert_xml(video_elements(conv), '<video><model type="vga" heads="1" vram="16384"/></video>')
    assert_xml(graphics_elements(conv), f'<graphics type="vnc"><listen type="socket" '
               f'socket="/var/run/kubevirt-private/{UID}/virt-vnc"/></graphics>')
    assert_xml(console_elements(conv), f'<serial type="unix"><target port="0"/><source mode="bind" '
               f'path="/var/run/kubevirt-private/{UID}/virt-serial0"/><log '
               f'file="/var/run/kubevirt-private/{UID}/virt-serial0-log" append="on"/></serial>'
               '<console type="pty"><target type="serial" port="0"/></console>')


def test_efi_guests_get_bochs_and_disabled_devices_disappear():
    conv = conversion(make_vmi({"firmware": {"uuid": FW_UUID, "bootloader": {"efi": {}}}}))
    assert_xml(video_elements(conv), '<video><model type="bochs" heads="1"/></video>')
    off = conversion(make_vmi({"devices": {"autoattachGraphicsDevice": False, "autoattachSerialConsole": False,
                                           "logSerialConsole": False}}))
    assert video_elements(off) == [] and graphics_elements(off) == [] and console_elements(off) == []


def test_memballoon_reporting_and_disabled():
    assert_xml(memballoon_element(conversion(make_vmi())),
               '<memballoon model="virtio-non-transitional" freePageReporting="on"><stats period="10"/></memballoon>')
    dedicated = conversion(make_vmi({"cpu": {"dedicatedCpuPlacement": True}}))
    assert memballoon_element(dedicated).get("freePageReporting") == "off"
    assert_xml(memballoon_element(conversion(make_vmi({"devices": {"autoattachMemBalloon": False}}))),
               '<memballoon model="none"/>')


def test_inputs_rng_tpm_watchdog_sound():
    conv = conversion(make_vmi({"devices": {"inputs": [{"name": "t1", "bus": "virtio"}, {"name": "t2"}], "rng": {},
                                            "tpm": {"persistent": True}, "watchdog": {"name": "wd"},
                                            "sound": {"name": "snd", "model": "ac97"}}}))
    assert_xml(input_elements(conv), '<input type="tablet" bus="virtio" model="virtio"><alias name="ua-t1"/></input>'
               '<input type="tablet" bus="usb"><alias name="ua-t2"/></input>')
    assert_xml(rng_elements(conv),
               '<rng model="virtio-non-transitional"><backend model="random">/dev/urandom</backend></rng>')
    assert_xml(tpm_elements(conv),
               '<tpm model="tpm-crb"><backend type="emulator" version="2.0" persistent_state="yes"/></tpm>')
    assert_xml(watchdog_elements(conv), '<watchdog model="i6300esb" action="reset"><alias name="ua-wd"/></watchdog>')
    assert_xml(sound_elements(conv), '<sound model="ac97"><alias name="ua-snd"/></sound>')
    plain = conversion(make_vmi({"devices": {"tpm": {}}}))
    assert_xml(tpm_elements(plain), '<tpm model="tpm-tis"><backend type="emulator" version="2.0"/></tpm>')
