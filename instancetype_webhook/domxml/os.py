"""<os>: machine, SMBIOS mode, boot menu, BIOS serial, EFI loader/NVRAM, kernel boot, ACPI tables."""
from __future__ import annotations

from typing import Final

from instancetype_webhook.domxml.conversion import Conversion
from instancetype_webhook.domxml.elements import Element, new, sub
from instancetype_webhook.domxml.errors import DomainError

NVRAM_DIR_ROOT: Final = "/var/lib/libvirt/qemu/nvram"
NVRAM_DIR_NONROOT: Final = "/var/run/kubevirt-private/libvirt/qemu/nvram"
KERNEL_BOOT_DIR: Final = "/var/run/kubevirt/container-disks/kernel-boot"
SECRET_DIR: Final = "/var/run/kubevirt-private/secret"


def os_element(conv: Conversion) -> Element:
    os_el = new("os")
    machine = (conv.domain.get("machine") or {}).get("type") or conv.arch.default_machine
    sub(os_el, "type", {"arch": conv.arch.os_arch, "machine": machine}, "hvm")
    _acpi_tables(conv, os_el)
    if conv.arch.smbios_mode:
        sub(os_el, "smbios", {"mode": "sysinfo"})
    if conv.spec.get("startStrategy") == "Paused":
        sub(os_el, "bootmenu", {"enable": "yes", "timeout": 10000})
    bios = (conv.firmware.get("bootloader") or {}).get("bios")
    if bios is not None and bios.get("useSerial"):
        sub(os_el, "bios", {"useserial": "yes"})
    if conv.efi is not None:
        _efi(conv, os_el)
    _kernel_boot(conv, os_el)
    return os_el


def efi_files(conv: Conversion) -> tuple[str, str]:
    """(code, vars) as virt-launcher picks them, or its error when the launcher image lacks them.

    No launcher image has SEV, SNP or TDX firmware, so those guests fail here too (firmware auto-selection,
    which would avoid the files for plain secure boot, is off in the converter context)."""
    secure = conv.secure_boot
    security = conv.launch_security or {}
    snp = security.get("snp") is not None
    sev = security.get("sev") is not None and not snp
    tdx = security.get("tdx") is not None
    files = None if (sev or snp or tdx) else conv.ctx.efi_environment(conv.architecture).files(secure)
    if files is None:
        flags = ", ".join(f"{name}={str(value).lower()}" for name, value in
                          (("SecureBoot", secure), ("SEV/SEV-ES", sev), ("SEV-SNP", snp), ("TDX", tdx)))
        raise DomainError(f"EFI OVMF roms missing for booting in EFI mode with {flags}")
    return files


def _efi(conv: Conversion, os_el: Element) -> None:
    secure = conv.secure_boot
    code, vars_ = efi_files(conv)
    sub(os_el, "loader", {"readonly": "yes", "secure": "yes" if secure else "no", "type": "pflash"}, code)
    nvram_dir = NVRAM_DIR_ROOT if conv.ctx.root_launcher else NVRAM_DIR_NONROOT
    sub(os_el, "nvram", {"template": vars_}, f"{nvram_dir}/{conv.name}_VARS.fd")


def _kernel_boot(conv: Conversion, os_el: Element) -> None:
    kernel_boot = conv.firmware.get("kernelBoot") or {}
    container = kernel_boot.get("container") or {}
    if container.get("kernelPath"):
        sub(os_el, "kernel", text=KERNEL_BOOT_DIR + "/" + container["kernelPath"].lstrip("/").split("/")[-1])
    if container.get("initrdPath"):
        sub(os_el, "initrd", text=KERNEL_BOOT_DIR + "/" + container["initrdPath"].lstrip("/").split("/")[-1])
    if kernel_boot.get("kernelArgs"):
        sub(os_el, "cmdline", text=kernel_boot["kernelArgs"])


def _acpi_tables(conv: Conversion, os_el: Element) -> None:
    acpi = conv.firmware.get("acpi")
    if acpi is None:
        return
    tables = [(kind, acpi[key]) for kind, key in (("slic", "slicNameRef"), ("msdm", "msdmNameRef")) if acpi.get(key)]
    if not tables:
        raise DomainError("No ACPI tables were set. Expecting at least one.")
    acpi_el = sub(os_el, "acpi")
    volumes = conv.volumes
    for kind, volume in tables:
        if volume not in volumes:
            raise DomainError(f"Firmware's volume for {kind} was not found")
        if volumes[volume][1].get("secret") is None:
            raise DomainError(f"Firmware's volume type is unsupported for {kind}")
        sub(acpi_el, "table", {"type": kind}, f"{SECRET_DIR}/{volume}/{kind}.bin")
