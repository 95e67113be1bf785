"""The playground's strict field validation: the VM's fields its release's schema does not have, at their place.

The same check as the CLI's (`sources.crds.unknown_fields_of`, the CRDs shipped with the package, less what an
older release lacks); each unknown field comes with the line and column of its key in the editor's text and the
key's length, so the page underlines the key itself, and with the warning kubectl would print.
"""
from __future__ import annotations

from typing import Any

from instancetype_webhook.kubevirt.releases import ReleaseProfile
from instancetype_webhook.kubevirt.unknown_fields import unknown_field_message
from instancetype_webhook.playground.yamlpos import Parsed, Path, locate, split_field
from instancetype_webhook.sources.crds import unknown_fields_of

__all__ = ["unknown_field_marks"]


def unknown_field_marks(vm: dict[str, Any], parsed: Parsed, prefix: Path,
                        release: ReleaseProfile) -> list[dict[str, Any]]:
    """`{field, message, line, column, length}` for every field of `vm` (written at `prefix` in the parsed
    text) that `release`'s schema lacks; line/column None when the field is not written in the text."""
    out = []
    for field in unknown_fields_of(vm, release) or ():
        position, exact = locate(parsed.positions, field, prefix)
        last = split_field(field)[-1] if field else ""
        out.append({"field": field, "message": f"Warning: {unknown_field_message(field)}",
                    "line": position.line if position and exact else None,
                    "column": position.column if position and exact else None,
                    "length": len(str(last))})
    return out
