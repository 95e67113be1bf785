"""<os> (domxml/os.py): BIOS, EFI loader and NVRAM, boot menu, kernel arguments, ACPI tables."""
from __future__ import annotations

import pytest

from instancetype_webhook.domxml import DomainError, LauncherContext
from instancetype_webhook.domxml.os import os_element
from tests.kit.domxml import FW_UUID, assert_xml, conversion, make_vmi


def test_os_bios_default():
    assert_xml(os_element(conversion(make_vmi())),
               '<os><type arch="x86_64" machine="q35">hvm</type><smbios mode="sysinfo"/></os>')


def test_os_efi_secure_boot_uses_secboot_pair_and_nonroot_nvram():
    conv = conversion(make_vmi({"firmware": {"uuid": FW_UUID, "bootloader": {"efi": {}}}}))
    assert_xml(os_element(conv), '<os><type arch="x86_64" machine="q35">hvm</type><smbios mode="sysinfo"/>'
               '<loader readonly="yes" secure="yes" type="pflash">/usr/share/edk2/ovmf/OVMF_CODE.secboot.fd</loader>'
               '<nvram template="/usr/share/edk2/ovmf/OVMF_VARS.secboot.fd">'
               '/var/run/kubevirt-private/libvirt/qemu/nvram/vm1_VARS.fd</nvram></os>')


def test_os_efi_without_secure_boot_falls_back_to_secboot_code():
    conv = conversion(make_vmi({"firmware": {"uuid": FW_UUID, "bootloader": {"efi": {"secureBoot": False}}}}),
                      LauncherContext(root_launcher=True))
    assert_xml(os_element(conv), '<os><type arch="x86_64" machine="q35">hvm</type><smbios mode="sysinfo"/>'
               '<loader readonly="yes" secure="no" type="pflash">/usr/share/edk2/ovmf/OVMF_CODE.secboot.fd</loader>'
               '<nvram template="/usr/share/edk2/ovmf/OVMF_VARS.fd">'
               '/var/lib/libvirt/qemu/nvram/vm1_VARS.fd</nvram></os>')


def test_os_paused_boot_menu_serial_bios_and_kernel_args():
    conv = conversion(make_vmi({"firmware": {"uuid": FW_UUID, "bootloader": {"bios": {"useSerial": True}},
                                             "kernelBoot": {"kernelArgs": "console=ttyS0"}}}, startStrategy="Paused"))
    assert_xml(os_element(conv), '<os><type arch="x86_64" machine="q35">hvm</type><smbios mode="sysinfo"/>'
               '<bootmenu enable="yes" timeout="10000"/><bios useserial="yes"/><cmdline>console=ttyS0</cmdline></os>')


def test_os_acpi_table_must_come_from_a_secret():
    vmi = make_vmi({"firmware": {"uuid": FW_UUID, "acpi": {"slicNameRef": "slic"}}},
                   volumes=[{"name": "slic", "configMap": {"name": "x"}}])
    with pytest.raises(DomainError, match="unsupported for slic"):
        os_element(conversion(vmi))
