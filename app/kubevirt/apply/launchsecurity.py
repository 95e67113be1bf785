"""Instance type launchSecurity (deprecated in v1.9; upstream `apply/launchsecurity.go`)."""
from __future__ import annotations

from typing import Any

from app.kubevirt.apply.conflicts import conflict
from app.kubevirt.causes import Cause
from app.kubevirt.goshape import LAUNCH_SECURITY, go_clone


def apply_launch_security(base: str, itype: dict[str, Any], domain: dict[str, Any]) -> list[Cause]:
    wanted = itype.get("launchSecurity")
    if wanted is None:
        return []
    if domain.get("launchSecurity") is not None:
        return [conflict(base, "domain", "launchSecurity")]
    domain["launchSecurity"] = go_clone(wanted, LAUNCH_SECURITY)
    return []
