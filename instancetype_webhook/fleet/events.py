"""Events (`events.k8s.io/v1`) on the VMs a sweep flattened (Normal) or could not flatten (Warning), as
`kubectl describe vm` shows them.

Aggregated as client-go's event recorder does (k8s.io/client-go/tools/events): an event like one
already recorded (same VM, type, reason and note) within `SERIES_WINDOW` (client-go's finishTime, 6
minutes) is not a new object: the stored one gets `series.count` (2, then +1) and
`series.lastObservedTime`. Unlike client-go's in-process cache this works across runs (a retried
CronJob pod, a second sweep), because the event's name is derived from what makes it the same event,
so it is found again with one GET; an event whose series ended is replaced by a fresh one.

`build`/`continued` are pure; `Recorder` writes through the VM client.
"""
from __future__ import annotations

import hashlib
import random
import socket
import threading
import time
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote

from instancetype_webhook.sources.kube import Conflict, KubeError, VMClient

CONTROLLER = "instancetype-webhook.kubevirt.io/sweep"
SERIES_WINDOW = timedelta(minutes=6)
NOTE_BYTES = 1024  # the API server refuses a longer note
EVENTS = "/apis/events.k8s.io/v1"

# audit action after the sweep -> (type, reason); the others (unchanged, skip) record nothing
REASONS: dict[str, tuple[str, str]] = {
    "flatten": ("Normal", "Flattened"),
    "refuse": ("Warning", "FlattenRefused"),
    "unresolved": ("Warning", "ReferenceNotFound"),
    "failed": ("Warning", "FlattenFailed"),
}


def micro_time(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _parse(text: str) -> datetime | None:
    try:
        return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    except (TypeError, ValueError):
        try:
            return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
        except (TypeError, ValueError):
            return None


def _note(finding: Mapping[str, Any], policy: str) -> str:
    if finding["action"] == "flatten":
        text = (f"flattened under {finding.get('policy') or policy}: {finding.get('ops', 0)} patch operations "
                "(instance type and preference inlined)")
    else:
        text = str(finding.get("reason") or finding["action"])
    raw = text.encode()
    return text if len(raw) <= NOTE_BYTES else raw[: NOTE_BYTES - 3].decode("utf-8", "ignore") + "..."


def name_for(vm: str, kind: str, reason: str, note: str, uid: str) -> str:
    """`<vm>.<16 hex>`: the same VM, type, reason and note always name the same event."""
    digest = hashlib.sha256("\x00".join((uid, kind, reason, note)).encode()).hexdigest()[:16]
    return f"{vm[:200]}.{digest}"


def build(finding: Mapping[str, Any], policy: str, now: datetime, instance: str) -> dict[str, Any] | None:
    """The event for one swept VM (`finding`: Finding.reference()), None when there is nothing to say."""
    kind_reason = REASONS.get(str(finding["action"]))
    if kind_reason is None:
        return None
    kind, reason = kind_reason
    note = _note(finding, policy)
    namespace, vm = str(finding["namespace"]), str(finding["name"])
    regarding = {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "namespace": namespace, "name": vm}
    if finding.get("uid"):
        regarding["uid"] = str(finding["uid"])
    return {"apiVersion": "events.k8s.io/v1", "kind": "Event",
            "metadata": {"name": name_for(vm, kind, reason, note, str(finding.get("uid") or "")),
                         "namespace": namespace},
            "eventTime": micro_time(now), "reportingController": CONTROLLER, "reportingInstance": instance[:128],
            "action": "Flatten", "reason": reason, "note": note, "type": kind, "regarding": regarding}


def last_seen(event: Mapping[str, Any]) -> datetime | None:
    series = event.get("series") or {}
    return _parse(str(series.get("lastObservedTime") or event.get("eventTime") or ""))


def continued(stored: Mapping[str, Any], fresh: dict[str, Any], now: datetime) -> dict[str, Any]:
    """What to store given the event already stored under the name: its series one longer when it is
    still open, else the fresh event (the series ended: a new one starts)."""
    seen = last_seen(stored)
    if seen is None or now - seen > SERIES_WINDOW:
        return {**fresh, "metadata": {**fresh["metadata"], "resourceVersion": stored["metadata"]["resourceVersion"]}}
    count = int((stored.get("series") or {}).get("count") or 1) + 1
    return {**stored, "series": {"count": count, "lastObservedTime": micro_time(now)}}


class Recorder:
    """Records sweep events; thread-safe (the sweep's workers call it). A conflict is read again and
    retried (at most `attempts` times, client-go's maxTriesPerEvent); a 403 turns events off with one
    warning (the sweep goes on); other failures are counted."""

    def __init__(self, client: VMClient, policy: str, instance: str | None = None, attempts: int = 12):
        self.client, self.policy, self.attempts = client, policy, attempts
        self.instance = f"{CONTROLLER.rsplit('/', 1)[-1]}-{instance or socket.gethostname()}"
        self.lock = threading.Lock()
        self.created = self.continued = self.failed = 0
        self.disabled = ""

    def _path(self, namespace: str, name: str | None = None) -> str:
        base = f"{EVENTS}/namespaces/{quote(namespace, safe='')}/events"
        return base + (f"/{quote(name, safe='')}" if name else "")

    def record(self, finding: Mapping[str, Any], now: datetime | None = None) -> None:
        if self.disabled:
            return
        now = now or datetime.now(UTC)
        fresh = build(finding, self.policy, now, self.instance)
        if fresh is None:
            return
        ns, name = fresh["metadata"]["namespace"], fresh["metadata"]["name"]
        try:
            for attempt in range(self.attempts):
                try:
                    stored = self.client.request("GET", self._path(ns, name))
                except KubeError as exc:
                    if exc.status != 404:
                        raise
                    stored = None
                try:
                    if stored is None:
                        self.client.request("POST", self._path(ns), body=fresh)
                        self._count("created")
                    else:
                        body = continued(stored, fresh, now)
                        self.client.request("PUT", self._path(ns, name), body=body)
                        self._count("continued" if body.get("series") else "created")
                    return
                except Conflict:  # created or updated meanwhile (another worker, another pod): read again
                    time.sleep(random.uniform(0, 0.01 * (attempt + 1)))
            self._count("failed")
        except KubeError as exc:
            if exc.status == 403:
                with self.lock:
                    self.disabled = f"events not recorded: {exc.message} (HTTP 403)"
                return
            self._count("failed")

    def _count(self, what: str) -> None:
        with self.lock:
            setattr(self, what, getattr(self, what) + 1)

    def summary(self) -> str:
        text = f"events: {self.created} recorded, {self.continued} added to a series"
        text += f", {self.failed} failed" if self.failed else ""
        return text + (f"; {self.disabled}" if self.disabled else "")
