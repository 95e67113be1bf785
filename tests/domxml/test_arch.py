"""Per-architecture domains (instancetype_webhook/domxml/arch.py and its use by the builders and VMI defaults):
the launcher follows the VMI's architecture, arm64 and s390x differ from amd64 as upstream's converter
does, ppc64le (no upstream launcher) and firmware an image lacks are refused with upstream's errors."""
from __future__ import annotations

import pytest
from lxml import etree

from instancetype_webhook.domxml import DomainError, LauncherContext, render_domain
from instancetype_webhook.domxml.arch import detect_efi, traits_for
from instancetype_webhook.domxml.vmi_defaults import apply_vmi_defaults
from tests.kit.domxml import make_vmi

CONTAINER_DISK = [{"name": "root", "containerDisk": {"image": "quay.io/containerdisks/fedora:41"}}]


def domain(vmi: dict, ctx: LauncherContext | None = None) -> etree._Element:
    return etree.fromstring(render_domain(vmi, ctx).encode())


def attrs(root: etree._Element, path: str) -> list[dict]:
    return [dict(e.attrib) for e in root.findall(path)]


def test_the_launcher_follows_the_vmi_architecture_and_an_explicit_context_wins():
    arm = make_vmi({"memory": {"guest": "1Gi"}}, architecture="arm64")
    assert domain(arm).find("os/type").get("arch") == "aarch64"
    with pytest.raises(DomainError, match="VMI is for arm64 but the launcher context is amd64"):
        render_domain(arm, LauncherContext(architecture="amd64"))
    assert domain(arm, LauncherContext(architecture="arm64")).find("os/type").get("machine") == "virt"


def test_arm64_defaults_and_devices():
    root = domain(make_vmi({"memory": {"guest": "2Gi"}, "cpu": {"sockets": 2}}, volumes=CONTAINER_DISK,
                           architecture="arm64"))
    assert attrs(root, "os/type") == [{"arch": "aarch64", "machine": "virt"}]
    assert root.find("os/smbios") is not None and root.find("sysinfo") is not None
    assert root.find("os/loader").text == "/usr/share/AAVMF/AAVMF_CODE.fd"
    assert root.find("os/loader").get("secure") == "no"  # UEFI by default, without secure boot
    assert root.find("os/nvram").get("template") == "/usr/share/AAVMF/AAVMF_VARS.fd"
    assert root.find("cpu").get("mode") == "host-passthrough"
    assert root.find("vcpus") is None and root.find("maxMemory") is None  # no CPU or memory hotplug
    assert root.find("vcpu").text == "2"
    assert root.find("devices/disk/target").get("bus") == "virtio"  # no SATA on arm64
    assert attrs(root, "devices/input") == [{"type": "tablet", "bus": "usb"}, {"type": "keyboard", "bus": "usb"}]
    assert attrs(root, "devices/controller[@type='usb']")[0]["model"] == "qemu-xhci"
    assert attrs(root, "devices/video/model") == [{"type": "virtio", "heads": "1"}]
    assert root.find("features/vmport") is None and root.find("features/acpi") is not None


def test_arm64_keeps_a_user_tablet_and_adds_no_inputs_without_graphics():
    tablet = {"devices": {"inputs": [{"name": "t", "type": "tablet", "bus": "virtio"}]}}
    root = domain(make_vmi(tablet, architecture="arm64"))
    assert [(i.get("type"), i.get("bus")) for i in root.findall("devices/input")] == [("tablet", "virtio"),
                                                                                       ("keyboard", "usb")]
    headless = domain(make_vmi({"devices": {"autoattachGraphicsDevice": False}}, architecture="arm64"))
    assert headless.findall("devices/input") == [] and headless.find("devices/video") is None


def test_arm64_firmware_and_watchdog_errors():
    secure = {"firmware": {"bootloader": {"efi": {"secureBoot": True}}}, "features": {"smm": {}}}
    with pytest.raises(DomainError) as info:
        render_domain(make_vmi(secure, architecture="arm64"))
    assert str(info.value) == ("EFI OVMF roms missing for booting in EFI mode with SecureBoot=true, "
                               "SEV/SEV-ES=false, SEV-SNP=false, TDX=false")
    with pytest.raises(DomainError, match="watchdog is not supported on architecture ARM64"):
        render_domain(make_vmi({"devices": {"watchdog": {"name": "w"}}}, architecture="arm64"))
    bios = make_vmi({"firmware": {"bootloader": {"bios": {}}}}, architecture="arm64")
    assert domain(bios).find("os/loader") is None  # an explicit bootloader is kept


def test_s390x_defaults_and_devices():
    root = domain(make_vmi({"memory": {"guest": "2Gi"}, "devices": {"watchdog": {"name": "w"}}},
                           volumes=CONTAINER_DISK, architecture="s390x"))
    assert attrs(root, "os/type") == [{"arch": "s390x", "machine": "s390-ccw-virtio"}]
    assert root.find("os/smbios") is None and root.find("os/loader") is None
    assert root.find("sysinfo") is not None
    assert list(root.find("features")) == []  # ACPI off by default, no vmport
    assert root.find("devices/disk").get("model") == "virtio"
    assert root.find("devices/memballoon").get("model") == "virtio"
    assert attrs(root, "devices/controller") == [
        {"type": "usb", "index": "0", "model": "none"}, {"type": "scsi", "index": "0", "model": "virtio-scsi"},
        {"type": "virtio-serial", "index": "0", "model": "virtio"}]
    assert attrs(root, "devices/input") == [{"type": "keyboard", "bus": "virtio"}]
    assert attrs(root, "devices/watchdog") == [{"model": "diag288", "action": "reset"}]
    assert root.find("devices/interface/rom") is None  # no ROM tuning off PCI
    assert len(root.findall("vcpus/vcpu")) == 4 and root.find("maxMemory") is None  # CPU hotplug only


def test_s390x_acpi_can_be_enabled_explicitly():
    root = domain(make_vmi({"features": {"acpi": {"enabled": True}}}, architecture="s390x"))
    assert root.find("features/acpi") is not None


def test_s390x_secure_execution_turns_iommu_on_instead_of_launch_security():
    root = domain(make_vmi({"launchSecurity": {}, "devices": {"rng": {}}}, volumes=CONTAINER_DISK,
                           architecture="s390x"))
    assert root.find("launchSecurity") is None
    for path in ("devices/memballoon/driver", "devices/rng/driver", "devices/disk/driver",
                 "devices/controller[@type='scsi']/driver", "devices/controller[@type='virtio-serial']/driver"):
        assert root.find(path).get("iommu") == "on", path
    assert attrs(root, "devices/interface/driver") == [{"name": "vhost", "iommu": "on"}]


def test_s390x_has_no_efi_firmware():
    with pytest.raises(DomainError) as info:
        render_domain(make_vmi({"firmware": {"bootloader": {"efi": {"secureBoot": False}}}}, architecture="s390x"))
    assert "EFI OVMF roms missing for booting in EFI mode with SecureBoot=false" in str(info.value)


def test_ppc64le_and_unknown_architectures_are_refused():
    with pytest.raises(DomainError, match="no virt-launcher for architecture 'ppc64le'"):
        render_domain(make_vmi(architecture="ppc64le"))
    with pytest.raises(DomainError, match="amd64, arm64 and s390x"):
        traits_for("riscv64")


def test_amd64_is_unchanged_by_the_architecture_split():
    root = domain(make_vmi({"devices": {"watchdog": {"name": "w"}}}, volumes=CONTAINER_DISK))
    assert attrs(root, "os/type") == [{"arch": "x86_64", "machine": "q35"}]
    assert root.find("devices/disk/target").get("bus") == "sata"
    assert root.find("features/vmport") is not None and root.findall("devices/input") == []
    assert attrs(root, "devices/watchdog") == [{"model": "i6300esb", "action": "reset"}]


def test_efi_detection_follows_the_launcher_image():
    amd = detect_efi("amd64", "/fw", frozenset({"OVMF_CODE.secboot.fd", "OVMF_VARS.fd", "OVMF_VARS.secboot.fd"}))
    assert amd.files(False) == ("/fw/OVMF_CODE.secboot.fd", "/fw/OVMF_VARS.fd")  # secure-boot code preferred
    assert amd.files(True) == ("/fw/OVMF_CODE.secboot.fd", "/fw/OVMF_VARS.secboot.fd")
    plain = detect_efi("amd64", "/fw", frozenset({"OVMF_CODE.fd", "OVMF_VARS.fd"}))
    assert plain.files(False) == ("/fw/OVMF_CODE.fd", "/fw/OVMF_VARS.fd") and plain.files(True) is None
    arm = detect_efi("arm64", "/usr/share/AAVMF", frozenset({"AAVMF_CODE.fd", "AAVMF_VARS.fd"}))
    assert arm.files(True) is None and arm.files(False)[0] == "/usr/share/AAVMF/AAVMF_CODE.fd"
    assert detect_efi("s390x", "", frozenset()).files(False) is None


def test_sev_guests_fail_because_no_image_has_sev_firmware():
    sev = {"launchSecurity": {"sev": {}}, "firmware": {"bootloader": {"efi": {"secureBoot": False}}}}
    with pytest.raises(DomainError) as info:
        render_domain(make_vmi(sev))
    assert str(info.value).endswith("SecureBoot=false, SEV/SEV-ES=true, SEV-SNP=false, TDX=false")


def test_arch_vmi_defaults():
    arm = apply_vmi_defaults(make_vmi({"devices": {"disks": [{"name": "d", "cdrom": {}}]}}, architecture="arm64"))
    dom = arm["spec"]["domain"]
    assert dom["firmware"]["bootloader"] == {"efi": {"secureBoot": False}}
    assert dom["devices"]["disks"][0]["cdrom"]["bus"] == "virtio" and dom["cpu"]["model"] == "host-passthrough"
    assert "maxSockets" not in dom["cpu"]
    s390 = apply_vmi_defaults(make_vmi(architecture="s390x"))["spec"]["domain"]
    assert s390["features"]["acpi"] == {"enabled": False} and s390["cpu"]["maxSockets"] == 4
    assert s390["machine"] == {"type": "s390-ccw-virtio"}


def test_dedicated_cpus_hint_only_amd64_and_s390x_limits_custom_block_sizes():
    dedicated = {"cpu": {"cores": 2, "dedicatedCpuPlacement": True}}
    assert domain(make_vmi(dedicated)).find("features/kvm/hint-dedicated") is not None
    for arch in ("arm64", "s390x"):
        root = domain(make_vmi(dedicated, architecture=arch))
        assert root.find("features/kvm") is None and root.find("cputune/vcpupin") is not None
    disk = {"devices": {"disks": [{"name": "root", "blockSize": {"custom": {"logical": 512, "physical": 8192}}}]}}
    with pytest.raises(DomainError, match="exceeds the maximum supported size of 4096 for architecture s390x"):
        render_domain(make_vmi(disk, volumes=CONTAINER_DISK, architecture="s390x"))
    assert domain(make_vmi(disk, volumes=CONTAINER_DISK)).find("devices/disk/blockio") is not None


def test_missing_firmware_is_reported_before_any_converter_error():
    both = {"firmware": {"bootloader": {"efi": {"secureBoot": True}}}, "devices": {"watchdog": {"name": "w"}}}
    with pytest.raises(DomainError, match="EFI OVMF roms missing"):
        render_domain(make_vmi(both, architecture="arm64"))
