"""Instance type launchSecurity (deprecated in v1.9; upstream `apply/launchsecurity.go`)."""
from __future__ import annotations

from typing import Any

from instancetype_webhook.kubevirt.apply.conflicts import conflict
from instancetype_webhook.kubevirt.causes import Cause
from instancetype_webhook.kubevirt.goshape import LAUNCH_SECURITY, go_clone


def apply_launch_security(base: str, itype: dict[str, Any], domain: dict[str, Any]) -> list[Cause]:
    wanted = itype.get("launchSecurity")
    if wanted is None:
        return []
    if domain.get("launchSecurity") is not None:
        return [conflict(base, "domain", "launchSecurity")]
    domain["launchSecurity"] = go_clone(wanted, LAUNCH_SECURITY)
    return []
