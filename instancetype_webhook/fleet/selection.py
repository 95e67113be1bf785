"""Which VMs a run covers: a namespace or all of them, and a shard `I/N` of those by a stable hash.

The hash is SHA-256 of `namespace/name`, so a VM always lands in the same shard, whichever pod of a
Kubernetes Indexed Job (`completionMode: Indexed`, index in JOB_COMPLETION_INDEX) lists it.
"""
from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from instancetype_webhook.sources.kube import Expired, VMClient

JOB_INDEX = "JOB_COMPLETION_INDEX"


@dataclass(frozen=True)
class Shard:
    index: int
    count: int

    @classmethod
    def parse(cls, text: str, environ: dict[str, str] | None = None) -> Shard:
        """`I/N` with 0 <= I < N; I may be `job`: the Indexed Job's JOB_COMPLETION_INDEX."""
        env = os.environ if environ is None else environ
        index, sep, count = text.partition("/")
        if index == "job":
            index = env.get(JOB_INDEX, "")
            if not index:
                raise ValueError(f"--shard job/N needs {JOB_INDEX} (set by an Indexed Job)")
        try:
            shard = cls(int(index), int(count))
        except ValueError:
            raise ValueError(f"--shard wants I/N with integers, not {text!r}") from None
        if not sep or shard.count < 1 or not 0 <= shard.index < shard.count:
            raise ValueError(f"--shard {text!r}: need 0 <= I < N")
        return shard

    def holds(self, namespace: str, name: str) -> bool:
        digest = hashlib.sha256(f"{namespace}/{name}".encode()).digest()
        return int.from_bytes(digest[:8], "big") % self.count == self.index


def key_of(vm: dict[str, Any]) -> tuple[str, str]:
    meta = found if isinstance(found := vm.get("metadata"), dict) else {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


def select(client: VMClient, namespace: str | None, shard: Shard | None = None,
           on_total: Callable[[int], None] | None = None) -> Iterator[dict[str, Any]]:
    """The VMs of `namespace` (None: all), in list order, each once.

    Lists page by page; if a continue token expires (410), the list starts again and VMs already
    yielded are skipped, so a long run over a busy cluster still covers every VM exactly once.
    """
    seen: set[tuple[str, str]] = set()
    while True:
        token: str | None = None
        try:
            while True:
                page = client.page(namespace, token)
                if on_total and token is None:
                    on_total(len(page.items) + int(page.remaining or 0))
                for vm in page.items:
                    key = key_of(vm)
                    if key in seen or (shard and not shard.holds(*key)):
                        continue
                    seen.add(key)
                    yield vm
                if not page.next:
                    return
                token = page.next
        except Expired:
            continue
