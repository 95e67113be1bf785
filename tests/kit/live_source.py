"""A reference source stub with a watch cache and a slow live lookup, for the tests of the review path's
offloading (tests/server/test_offload.py, tests/server/test_transport_direct.py)."""
from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from instancetype_webhook.kubevirt.source import CacheMiss


class LiveSource:
    """Cached names answer at once; anything else needs a (slow) fetch, refused while cache-only."""

    def __init__(self, cached: set[str], fetch_seconds: float = 0.0):
        self.cached, self.fetch_seconds = cached, fetch_seconds
        self.local = threading.local()
        self.fetches = 0

    @contextmanager
    def cache_only(self) -> Iterator[None]:
        self.local.on = True
        try:
            yield
        finally:
            self.local.on = False

    def get(self, name: str) -> str:
        if name in self.cached:
            return name
        if getattr(self.local, "on", False):
            raise CacheMiss(name)
        self.fetches += 1
        threading.Event().wait(self.fetch_seconds)
        return name
