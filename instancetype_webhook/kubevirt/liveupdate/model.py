"""The planner's answer as plain values (no I/O): what upstream decides when a running VM is edited."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from instancetype_webhook.kubevirt.causes import Verdict

GENERIC_RESTART: Final = "a non-live-updatable field was changed in the template spec"

# VMI condition types the hotplug handlers make the VMI controller add.
HOT_VCPU_CHANGE: Final = "HotVCPUChange"
HOT_MEMORY_CHANGE: Final = "HotMemoryChange"


@dataclass(frozen=True)
class SyncError:
    """The VM's `Failure` condition after the controller's last sync (retried by a cluster)."""

    reason: str
    message: str


@dataclass
class Plan:
    """What happens when the running VM is edited to the new VM.

    `admission` is the UPDATE's answer (the mutating then the validating webhook); when it refuses,
    nothing else happens and the other members stay empty. `restart_required` is the message of the
    VM's RestartRequired condition (None: none). `vmi_patched` maps dotted VMI paths to their new
    values (None: removed). `conditions` are the VMI conditions the VMI controller adds afterwards.
    """

    admission: Verdict
    restart_required: str | None = None
    vmi_patched: dict[str, Any] = field(default_factory=dict)
    conditions: list[str] = field(default_factory=list)
    sync_error: SyncError | None = None
    # The expanded template specs of the VM before and after the edit (for reports; None when unknown).
    before: dict[str, Any] | None = field(default=None, repr=False, compare=False)
    after: dict[str, Any] | None = field(default=None, repr=False, compare=False)

    @property
    def refused(self) -> bool:
        return not self.admission.allowed

    @property
    def live(self) -> bool:
        return self.admission.allowed and bool(self.vmi_patched) and self.restart_required is None


class StartError(Exception):
    """The VM as started cannot be reproduced (refused at creation, a missing object, no template)."""
