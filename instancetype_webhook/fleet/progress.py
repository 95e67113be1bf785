"""A progress bar on a terminal (tqdm, on stderr), nothing on a pipe or a file."""
from __future__ import annotations

import sys
from typing import Any, TextIO


class Progress:
    def __init__(self, label: str, stream: TextIO | None = None, enabled: bool | None = None):
        self.stream = stream or sys.stderr
        on = self.stream.isatty() if enabled is None else enabled
        self.bar: Any = None
        if on:
            from tqdm import tqdm  # only needed on a terminal

            self.bar = tqdm(desc=label, unit="vm", file=self.stream, dynamic_ncols=True, leave=False)

    def total(self, n: int) -> None:
        if self.bar is not None:
            self.bar.total = n
            self.bar.refresh()

    def tick(self, *_: Any) -> None:
        if self.bar is not None:
            self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.refresh()  # the final count, then the line is cleared
            self.bar.close()
