"""The one error the generator raises: the cases where upstream's converter rejects a VMI."""
from __future__ import annotations


class DomainError(ValueError):
    """The VMI cannot be converted (upstream's converter returns an error for it)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
