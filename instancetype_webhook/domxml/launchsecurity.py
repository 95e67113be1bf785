"""<launchSecurity> for AMD SEV / SEV-SNP and Intel TDX guests."""
from __future__ import annotations

from typing import Final

from instancetype_webhook.domxml.conversion import Conversion
from instancetype_webhook.domxml.elements import Element, new, sub

SEV_POLICY_NO_DEBUG: Final = 1 << 0
SEV_POLICY_ENCRYPTED_STATE: Final = 1 << 2
SNP_POLICY_DEFAULT: Final = 0x30000  # reserved bit 17 set, SMT allowed (bit 16)


def launch_security_element(conv: Conversion) -> Element | None:
    security = conv.launch_security
    if security is None or not conv.amd64:  # arm64: none; s390x Secure Execution: iommu on devices instead
        return None
    if security.get("sev") is None and security.get("snp") is not None:
        element = new("launchSecurity", {"type": "sev-snp"})
        sub(element, "policy", text=hex(SNP_POLICY_DEFAULT))
        return element
    if security.get("sev") is not None:
        sev = security["sev"]
        bits = SEV_POLICY_NO_DEBUG
        if (sev.get("policy") or {}).get("encryptedState"):
            bits |= SEV_POLICY_ENCRYPTED_STATE
        element = new("launchSecurity", {"type": "sev"})
        sub(element, "policy", text=f"0x{bits:x}")
        if sev.get("dhCert"):
            sub(element, "dhCert", text=sev["dhCert"])
        if sev.get("session"):
            sub(element, "session", text=sev["session"])
        return element
    if security.get("tdx") is not None:
        return new("launchSecurity", {"type": "tdx"})
    return None
