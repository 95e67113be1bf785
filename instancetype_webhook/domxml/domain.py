"""Assemble <domain> from the builders, in the order upstream's Go structs serialize it."""
from __future__ import annotations

from typing import Any, Final

from lxml import etree

from instancetype_webhook.domxml.clock import clock_element
from instancetype_webhook.domxml.context import LauncherContext
from instancetype_webhook.domxml.controllers import controller_elements
from instancetype_webhook.domxml.conversion import Conversion
from instancetype_webhook.domxml.cpu import cpu_element, vcpu_elements
from instancetype_webhook.domxml.devices import (
    channel_elements,
    console_elements,
    graphics_elements,
    input_elements,
    memballoon_element,
    panic_elements,
    redirdev_elements,
    rng_elements,
    sound_elements,
    tpm_elements,
    video_elements,
    vsock_elements,
    watchdog_elements,
)
from instancetype_webhook.domxml.disks import disk_elements
from instancetype_webhook.domxml.elements import Element, sub
from instancetype_webhook.domxml.errors import DomainError
from instancetype_webhook.domxml.features import features_element
from instancetype_webhook.domxml.hostdevices import hostdev_elements
from instancetype_webhook.domxml.interfaces import interface_elements
from instancetype_webhook.domxml.iothreads import IOThreadPlan, iothreads_element, plan_iothreads
from instancetype_webhook.domxml.launchsecurity import launch_security_element
from instancetype_webhook.domxml.memory import memory_backing, memory_elements
from instancetype_webhook.domxml.os import efi_files, os_element
from instancetype_webhook.domxml.pinning import NumaPassthrough, Pinning
from instancetype_webhook.domxml.qemucmd import qemu_commandline
from instancetype_webhook.domxml.sysinfo import sysinfo_element

QEMU_NS: Final = "http://libvirt.org/schemas/domain/qemu/1.0"
KUBEVIRT_NS: Final = "http://kubevirt.io"


def domain_type(conv: Conversion) -> str:
    ctx = conv.ctx
    if ctx.hypervisor_device_available:
        return "kvm"
    if ctx.allow_emulation:
        return "qemu"
    raise DomainError("hardware emulation device '/dev/kvm' not present")


def build_domain(vmi: dict[str, Any], ctx: LauncherContext) -> Element:
    conv = Conversion(vmi=vmi, ctx=ctx)
    if not conv.name:
        raise DomainError("the VMI has no metadata.name")
    vmi_arch = conv.spec.get("architecture") or "amd64"
    if ctx.architecture and vmi_arch != ctx.architecture:
        raise DomainError(f"the VMI is for {vmi_arch} but the launcher context is {ctx.architecture}: "
                          "only same-architecture domains are generated")
    _ = conv.arch  # refuses an architecture without a launcher
    if conv.efi is not None:
        efi_files(conv)  # virt-launcher resolves the firmware before it converts: its error comes first
    plan = plan_iothreads(conv)
    pinning = Pinning(conv, plan) if conv.dedicated else None
    numa = NumaPassthrough(conv, pinning) if pinning is not None and conv.numa_passthrough else None

    root = etree.Element("domain", nsmap={"qemu": QEMU_NS})
    root.set("type", domain_type(conv))
    sub(root, "name", text=f"{conv.namespace}_{conv.name}")
    root.extend(memory_elements(conv))
    backing = memory_backing(conv)
    if backing is not None:
        if numa is not None:
            numa.adjust_backing(backing)
        root.append(backing)
    root.append(os_element(conv))
    root.append(sysinfo_element(conv))
    root.append(_devices(conv, plan))
    clock = clock_element(conv)
    if clock is not None:
        root.append(clock)
    qemu_commandline(conv, root)
    _metadata(root)
    root.append(features_element(conv))
    cpu = cpu_element(conv)
    if numa is not None:
        for old in cpu.findall("numa"):
            cpu.remove(old)
        cpu.append(numa.numa())
    root.append(cpu)
    root.extend(vcpu_elements(conv))
    if pinning is not None:
        root.append(pinning.cputune())
    if numa is not None:
        root.append(numa.numatune())
    iothreads = iothreads_element(plan)
    if iothreads is not None:
        root.append(iothreads)
    security = launch_security_element(conv)
    if security is not None:
        root.append(security)
    if conv.domain.get("rebootPolicy") == "Terminate":
        sub(root, "on_reboot", text="destroy")
    return root


def _devices(conv: Conversion, plan: IOThreadPlan) -> Element:
    devices = etree.Element("devices")
    for group in (
        interface_elements(conv), channel_elements(conv), hostdev_elements(conv), panic_elements(conv),
        controller_elements(conv, plan), video_elements(conv), graphics_elements(conv), [memballoon_element(conv)],
        disk_elements(conv, plan), input_elements(conv), console_elements(conv), watchdog_elements(conv),
        rng_elements(conv), redirdev_elements(conv), sound_elements(conv), tpm_elements(conv), vsock_elements(conv),
    ):
        devices.extend(group)
    return devices


def _metadata(root: Element) -> None:
    metadata = sub(root, "metadata")
    kubevirt = etree.SubElement(metadata, f"{{{KUBEVIRT_NS}}}kubevirt", nsmap={None: KUBEVIRT_NS})
    etree.SubElement(kubevirt, f"{{{KUBEVIRT_NS}}}uid")
