"""What the commands write for a terminal and for a pipe, as kubectl does.

- colour only on a terminal, and never when NO_COLOR is set to anything but "" (https://no-color.org);
- `-o name`: `virtualmachine.kubevirt.io/NAME` (kind in lower case, the API group, the name);
- `--quiet`: the `note: ...` lines on stderr are left out (warnings and errors still show).
"""
from __future__ import annotations

import os
from typing import Any, TextIO


def use_colour(stream: Any) -> bool:
    """Colour for `stream`: a terminal, and NO_COLOR unset (or empty)."""
    if os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def resource_name(obj: dict[str, Any]) -> str:
    """kubectl's `-o name`: `kind.group/name` (`kind/name` for the core group)."""
    kind = str(obj.get("kind") or "").lower()
    group = str(obj.get("apiVersion") or "").rpartition("/")[0]
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    name = str((meta or {}).get("name") or (meta or {}).get("generateName") or "")
    return f"{kind}.{group}/{name}" if group else f"{kind}/{name}"


NOTE = "note: "


class Quiet:
    """A text stream that passes everything but whole lines starting with "note: " (--quiet)."""

    def __init__(self, stream: TextIO):
        self.stream = stream
        self.pending = ""

    def write(self, text: str) -> int:
        self.pending += text
        *lines, self.pending = self.pending.split("\n")
        for line in lines:
            if not line.startswith(NOTE):
                self.stream.write(line + "\n")
        return len(text)

    def flush(self) -> None:
        if self.pending and not NOTE.startswith(self.pending) and not self.pending.startswith(NOTE):
            self.stream.write(self.pending)
            self.pending = ""
        self.stream.flush()

    def isatty(self) -> bool:
        return self.stream.isatty()

    def fileno(self) -> int:
        return self.stream.fileno()

    def __getattr__(self, name: str) -> Any:  # encoding, buffer, ...: the wrapped stream's
        return getattr(self.stream, name)
