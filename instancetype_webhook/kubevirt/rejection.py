"""Rejections shaped like upstream's webhook helpers (pkg/util/webhooks: ToAdmissionResponse[Error]).

- from causes: code 422, reason Invalid, the cause messages joined by ", "; at most 10 causes are kept and
  the message then ends with ", and <k> more validation errors";
- from an error: code 400, the error text, no causes.
"""
from __future__ import annotations

from typing import Final

from instancetype_webhook.kubevirt.causes import Cause, Verdict

MAX_CAUSES: Final = 10


def reject(causes: list[Cause]) -> Verdict:
    kept = list(causes[:MAX_CAUSES])
    message = ", ".join(cause.message for cause in kept)
    if len(causes) > MAX_CAUSES:
        message += f", and {len(causes) - MAX_CAUSES} more validation errors"
    return Verdict(allowed=False, message=message, code=422, causes=kept)


def error(message: str) -> Verdict:
    return Verdict(allowed=False, message=message, code=400)
