"""<clock>: offset (utc with adjustment, or timezone) and timers; only when the VMI has a clock."""
from __future__ import annotations

from typing import Final

from instancetype_webhook.domxml.conversion import Conversion
from instancetype_webhook.domxml.elements import Element, new, sub, yes_no

# VMI timer name -> libvirt timer name, in the converter's order
TIMERS: Final = (("rtc", "rtc"), ("pit", "pit"), ("kvm", "kvmclock"), ("hpet", "hpet"), ("hyperv", "hypervclock"))


def clock_element(conv: Conversion) -> Element | None:
    clock = conv.domain.get("clock")
    if clock is None:
        return None
    element = new("clock")
    if clock.get("utc") is not None:
        offset = clock["utc"].get("offsetSeconds")
        element.set("offset", "utc")
        element.set("adjustment", "reset" if offset is None else str(offset))
    elif clock.get("timezone"):
        element.set("offset", "timezone")
        element.set("timezone", str(clock["timezone"]))
    for vmi_name, libvirt_name in TIMERS:
        timer = (clock.get("timer") or {}).get(vmi_name)
        if timer is None:
            continue
        present = yes_no(timer.get("present", True) is not False)
        attrs: dict[str, str | None] = {"name": libvirt_name}
        if vmi_name in ("rtc", "pit", "hpet"):
            attrs["tickpolicy"] = timer.get("tickPolicy") or None
        attrs["present"] = present
        if vmi_name == "rtc":
            attrs["track"] = timer.get("track") or None
        sub(element, "timer", attrs)
    return element
