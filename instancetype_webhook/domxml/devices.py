"""The other devices: guest-agent channel, video + VNC, balloon, inputs, serial console, watchdog, rng,
USB redirection, sound, TPM, panic, vsock."""
from __future__ import annotations

from typing import Final

from instancetype_webhook.domxml.conversion import Conversion
from instancetype_webhook.domxml.elements import Element, new, on_off, sub
from instancetype_webhook.domxml.errors import DomainError

PRIVATE: Final = "/var/run/kubevirt-private"
VIDEO_HEADS: Final = 1
VIDEO_VRAM: Final = 16384
USB_REDIR_COUNT: Final = 4


def channel_elements(conv: Conversion) -> list[Element]:
    channel = new("channel", {"type": "unix"})
    sub(channel, "target", {"name": "org.qemu.guest_agent.0", "type": "virtio"})
    elements = [channel]
    if conv.devices.get("downwardMetrics") is not None:
        metrics = new("channel", {"type": "unix"})
        sub(metrics, "source", {"mode": "bind", "path": "/var/run/kubevirt-private/downwardapi-disks/vhostmd0"})
        sub(metrics, "target", {"name": "org.github.vhostmd.1", "type": "virtio"})
        elements.append(metrics)
    return elements


def graphics_disabled(conv: Conversion) -> bool:
    return conv.devices.get("autoattachGraphicsDevice") is False


def video_elements(conv: Conversion) -> list[Element]:
    if graphics_disabled(conv):
        return []
    video = new("video")
    user_video = conv.devices.get("video")
    if user_video is not None:
        sub(video, "model", {"type": user_video.get("type"), "heads": VIDEO_HEADS, "vram": VIDEO_VRAM})
    elif conv.arch.video != "vga":
        sub(video, "model", {"type": conv.arch.video, "heads": VIDEO_HEADS})
    elif conv.ctx.bochs_for_efi_guests and conv.efi is not None:
        sub(video, "model", {"type": "bochs", "heads": VIDEO_HEADS})
    else:
        sub(video, "model", {"type": "vga", "heads": VIDEO_HEADS, "vram": VIDEO_VRAM})
    return [video]


def graphics_elements(conv: Conversion) -> list[Element]:
    if graphics_disabled(conv):
        return []
    graphics = new("graphics", {"type": "vnc"})
    sub(graphics, "listen", {"type": "socket", "socket": f"{PRIVATE}/{conv.uid}/virt-vnc"})
    return [graphics]


def free_page_reporting(conv: Conversion) -> bool:
    if not conv.ctx.free_page_reporting:
        return False
    if conv.dedicated or conv.realtime or conv.memory.get("hugepages") is not None:  # high-performance VMIs
        return False
    return conv.annotations.get("kubevirt.io/free-page-reporting-disabled") != "true"  # exact, as upstream


def memballoon_element(conv: Conversion) -> Element:
    if conv.devices.get("autoattachMemBalloon") is False:
        return new("memballoon", {"model": "none"})
    balloon = new("memballoon", {"model": conv.virtio_model})
    if conv.ctx.mem_balloon_stats_period:
        sub(balloon, "stats", {"period": conv.ctx.mem_balloon_stats_period})
    if conv.iommu:
        sub(balloon, "driver", {"iommu": "on"})
    balloon.set("freePageReporting", on_off(free_page_reporting(conv)))
    return balloon


def input_elements(conv: Conversion) -> list[Element]:
    elements = []
    for inp in conv.devices.get("inputs") or []:
        bus = inp.get("bus") or "usb"
        if bus not in ("usb", "virtio"):
            raise DomainError(f"input contains unsupported bus {bus}")
        if inp.get("type") != "tablet":
            raise DomainError(f"input contains unsupported type {inp.get('type') or ''}")
        element = new("input", {"type": "tablet", "bus": bus})
        sub(element, "alias", {"name": f"ua-{inp.get('name')}"})
        if bus == "virtio":
            element.set("model", "virtio")
        elements.append(element)
    if not graphics_disabled(conv):
        has_tablet = any(inp.get("type") == "tablet" for inp in conv.devices.get("inputs") or [])
        for kind, bus in conv.arch.extra_inputs:
            if kind != "tablet" or not has_tablet:
                elements.append(new("input", {"type": kind, "bus": bus}))
    return elements


def console_elements(conv: Conversion) -> list[Element]:
    if conv.devices.get("autoattachSerialConsole") is False:
        return []
    base = f"{PRIVATE}/{conv.uid}/virt-serial0"
    serial = new("serial", {"type": "unix"})
    sub(serial, "target", {"port": 0})
    sub(serial, "source", {"mode": "bind", "path": base})
    own = conv.devices.get("logSerialConsole")  # the VMI's own choice wins over the cluster's switch
    if own is True or (own is None and conv.ctx.serial_console_log):
        sub(serial, "log", {"file": f"{base}-log", "append": "on"})
    console = new("console", {"type": "pty"})
    sub(console, "target", {"type": "serial", "port": 0})
    return [serial, console]


def watchdog_elements(conv: Conversion) -> list[Element]:
    watchdog = conv.devices.get("watchdog")
    if watchdog is None:
        return []
    if conv.architecture == "arm64":
        raise DomainError("watchdog is not supported on architecture ARM64")
    model = "diag288" if conv.architecture == "s390x" else "i6300esb"
    device = watchdog.get(model)
    if device is None:
        raise DomainError(f"watchdog {watchdog.get('name') or ''} can't be mapped, no watchdog type specified")
    element = new("watchdog", {"model": model, "action": device.get("action") or None})
    sub(element, "alias", {"name": f"ua-{watchdog.get('name')}"})
    return [element]


def rng_elements(conv: Conversion) -> list[Element]:
    if conv.devices.get("rng") is None:
        return []
    rng = new("rng", {"model": conv.virtio_model})
    sub(rng, "backend", {"model": "random"}, "/dev/urandom")
    if conv.iommu:
        sub(rng, "driver", {"iommu": "on"})
    return [rng]


def redirdev_elements(conv: Conversion) -> list[Element]:
    if conv.devices.get("clientPassthrough") is None:
        return []
    elements = []
    for index in range(USB_REDIR_COUNT):
        redir = new("redirdev", {"type": "unix", "bus": "usb"})
        sub(redir, "source", {"mode": "bind", "path": f"{PRIVATE}/{conv.uid}/virt-usbredir-{index}"})
        elements.append(redir)
    return elements


def sound_elements(conv: Conversion) -> list[Element]:
    sound = conv.devices.get("sound")
    if sound is None:
        return []
    model = "ac97" if sound.get("model") == "ac97" else "ich9"
    element = new("sound", {"model": model})
    sub(element, "alias", {"name": f"ua-{sound.get('name')}"})
    return [element]


def tpm_elements(conv: Conversion) -> list[Element]:
    tpm = conv.devices.get("tpm")
    if tpm is None or tpm.get("enabled") is False:
        return []
    persistent = bool(tpm.get("persistent"))
    element = new("tpm", {"model": "tpm-crb" if persistent else "tpm-tis"})
    sub(element, "backend", {"type": "emulator", "version": "2.0", "persistent_state": "yes" if persistent else None})
    return [element]


def panic_elements(conv: Conversion) -> list[Element]:
    return [new("panic", {"model": p.get("model")}) for p in conv.devices.get("panicDevices") or []]


def vsock_elements(conv: Conversion) -> list[Element]:
    cid = (conv.vmi.get("status") or {}).get("VSOCKCID")
    if not conv.devices.get("autoattachVSOCK") or cid is None:
        return []
    vsock = new("vsock", {"model": conv.virtio_model})
    sub(vsock, "cid", {"auto": "no", "address": cid})
    return [vsock]
