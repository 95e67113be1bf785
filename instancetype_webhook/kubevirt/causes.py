"""Causes and errors as values, in upstream's wire format (metav1.StatusCause)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal

FIELD_VALUE_INVALID: Final = "FieldValueInvalid"
FIELD_VALUE_REQUIRED: Final = "FieldValueRequired"
FIELD_VALUE_NOT_SUPPORTED: Final = "FieldValueNotSupported"

ErrorKind = Literal["conflict", "notFound", "badRequest", "schema"]


@dataclass(frozen=True)
class Cause:
    """One metav1.StatusCause: `reason` is the cause type, `field` the offending path."""

    reason: str
    message: str
    field: str = ""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"reason": self.reason, "message": self.message}
        if self.field:
            out["field"] = self.field
        return out


class ExpandError(Exception):
    """Expansion failed: what `expand-vm-spec` answers with a 400/404 Status."""

    def __init__(self, kind: ErrorKind, message: str, causes: list[Cause] | None = None):
        super().__init__(message)
        self.kind: ErrorKind = kind
        self.message = message
        self.causes: list[Cause] = list(causes or [])


@dataclass(init=False)
class Verdict:
    """The answer of an admission check (the instancetype stage of the VM validator, or object admission)."""

    allowed: bool
    message: str | None
    code: int | None
    causes: list[Cause]
    warnings: list[str]

    # __init__ written out: the compiled build runs a dataclass's generated __init__ as Python (5x the cost)
    def __init__(self, allowed: bool, message: str | None = None, code: int | None = None,
                 causes: list[Cause] | None = None, warnings: list[str] | None = None) -> None:
        self.allowed = allowed
        self.message = message
        self.code = code
        self.causes = [] if causes is None else causes
        self.warnings = [] if warnings is None else warnings

    @classmethod
    def allow(cls, warnings: list[str] | None = None) -> Verdict:
        # Verdict(...), not cls(...): the compiled build calls the constructor directly (cls goes through
        # Python's generic call with keywords, about 4,000 instructions a verdict)
        return Verdict(allowed=True, warnings=list(warnings or []))

    @classmethod
    def deny(cls, causes: list[Cause], code: int = 422) -> Verdict:
        return Verdict(allowed=False, message=", ".join(c.message for c in causes), code=code, causes=list(causes))
