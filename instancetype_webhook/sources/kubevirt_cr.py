"""The cluster configuration in use, followed live from the KubeVirt CRs a watch reports.

virt-api's rules (pkg/virt-config): the CR it reads is one not being deleted whose `status.phase` is set
(virt-operator has seen it); its configuration is merged over KubeVirt's defaults
(`kubevirt.configuration`). An invalid configuration is logged and not used: the last valid one stays.
When the CR disappears the last configuration stays too; only a cluster that never had a usable CR runs on
the defaults (here: the `fallback` settings, upstream's defaults unless the operator demoted old
environment settings into it).

The KubeVirt release answered as (kubevirt.releases) is the CR's `status.observedKubeVirtVersion`
(`releases.from_kubevirt`: during an upgrade the observed, older release; no CR, no status or a version
that names no supported release: main, saying why), unless `release` (serve --kubevirt-version R) pins it.

`update(objects)` is called with every KubeVirt object after each list and watch event; listeners
(`subscribe`) get the new ClusterSettings whenever they change, so the next review uses them.

Offline (`serve --catalog DIR`), a KubeVirt object among DIR's manifests is the configuration
(`kubevirt_among`); as for the CLI's `-f` documents, no `status.phase` is needed.
"""
from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from instancetype_webhook.kubevirt.configuration import (
    DEFAULT_SETTINGS,
    ClusterSettings,
    kubevirt_problem,
    settings_from_kubevirt,
    usable_kubevirt,
)
from instancetype_webhook.kubevirt.releases import ReleaseProfile, defaulted, from_kubevirt
from instancetype_webhook.sources.catalog import CatalogError

log = logging.getLogger("instancetype_webhook.cluster")

Listener = Callable[[ClusterSettings], None]


def _where(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace') or ''}/{meta.get('name') or ''}"


class ClusterConfiguration:
    """The ClusterSettings in use (see the module docstring); `pinned` ("namespace/name") limits it to one CR."""

    def __init__(self, fallback: ClusterSettings = DEFAULT_SETTINGS, pinned: str | None = None,
                 release: ReleaseProfile | None = None):
        self.fallback = fallback
        self.pinned = pinned
        self.release_override = release
        self.settings = replace(fallback, release=release or defaulted("no KubeVirt CR read yet"))
        self.applies = ("KubeVirt's defaults apply" if fallback.origin == "defaults"
                        else "KubeVirt's defaults with the INSTANCETYPE_WEBHOOK_CLUSTER_* settings apply")
        self.reason = f"no KubeVirt CR found: {self.applies}"
        self._seen_cr = False
        self.kubevirt: Mapping[str, Any] | None = None  # the KubeVirt CR whose configuration is in use
        self._invalid_version = ""
        self._listeners: list[Listener] = []
        self._lock = threading.Lock()

    def subscribe(self, listener: Listener) -> None:
        """Call `listener(settings)` now and on every change."""
        self._listeners.append(listener)
        listener(self.settings)

    def describe(self, settings: ClusterSettings | None = None) -> str:
        """One line for /readyz and the logs: which configuration is in use (or would be, given `settings`)."""
        settings = settings or self.settings
        if settings.origin.startswith("KubeVirt"):
            return f"{settings.origin} generation {settings.generation} (resourceVersion {settings.resource_version})"
        return self.reason

    def settings_as(self, release: ReleaseProfile) -> ClusterSettings:
        """The configuration in use answered as `release` (its defaults under the CR's spec.configuration):
        what the cluster would answer after an upgrade to `release` (audit's upgrade preview)."""
        if self.kubevirt is not None:
            return settings_from_kubevirt(self.kubevirt, self.settings, release)
        return replace(self.settings, release=release)

    def unavailable(self, why: str) -> None:
        """The KubeVirt CRs cannot be read (not installed, or no RBAC): the defaults apply."""
        reason = f"{why}: {self.applies}"
        log.warning("cluster configuration: %s", reason)  # before it is visible, as in _update
        with self._lock:
            self.reason = reason
            changed = None if self._seen_cr else self._defaulted_release(why)
        self._notify(changed)

    def _defaulted_release(self, why: str) -> ClusterSettings | None:
        """The settings answering as main because no release is known (`why`), unless pinned; None: unchanged."""
        if self.release_override is not None or self.settings.release.describe() == defaulted(why).describe():
            return None
        log.warning("KubeVirt release: %s", defaulted(why).describe())
        self.settings = replace(self.settings, release=defaulted(why))
        return self.settings

    def _notify(self, changed: ClusterSettings | None) -> None:
        if changed is not None:
            for listener in list(self._listeners):
                listener(changed)

    def update(self, objects: Iterable[Mapping[str, Any]]) -> None:
        with self._lock:
            changed = self._update([o for o in objects if self.pinned is None or _where(o) == self.pinned])
        self._notify(changed)

    def _update(self, objects: list[Mapping[str, Any]]) -> ClusterSettings | None:
        kubevirt = usable_kubevirt(objects)
        if kubevirt is None:
            return self._no_kubevirt(objects)
        self._seen_cr = True
        version = str((kubevirt.get("metadata") or {}).get("resourceVersion") or "")
        if version and version in (self.settings.resource_version, self._invalid_version):
            return None
        problem = kubevirt_problem(kubevirt)
        if problem is not None:
            self._invalid_version = version
            log.error("cluster configuration: KubeVirt %s resourceVersion %s is invalid (%s); keeping %s",
                      _where(kubevirt), version, problem, self.describe())
            return None
        release = self.release_override or from_kubevirt(kubevirt)
        settings = settings_from_kubevirt(kubevirt, self.settings, release)
        if settings == self.settings:
            return None
        # logged before the new settings are in use: whoever waits for them may move on at once
        log.info("cluster configuration: %s", self.describe(settings))
        self.kubevirt = kubevirt
        if settings.release.describe() != self.settings.release.describe():
            log.log(logging.WARNING if release.assumed else logging.INFO, "KubeVirt release: %s (from %s)",
                    release.describe(), release.source)
        self.settings = settings
        return settings

    def _no_kubevirt(self, objects: list[Mapping[str, Any]]) -> ClusterSettings | None:
        if self._seen_cr:
            log.warning("cluster configuration: no usable KubeVirt CR any more; keeping %s, as virt-api does",
                        self.describe())
            return None
        what = f"KubeVirt {self.pinned}" if self.pinned else "KubeVirt CR"
        reason = (f"no {what} with a status.phase yet" if objects else f"no {what} found") + f": {self.applies}"
        if reason != self.reason:
            log.warning("cluster configuration: %s", reason)  # before it is visible, as above
            self.reason = reason
        return self._defaulted_release(reason.split(": ")[0])


def kubevirt_among(found: Iterable[tuple[Path, dict[str, Any]]], directory: str | Path) -> Mapping[str, Any] | None:
    """The one KubeVirt object among those `found` under `directory` (each with its file; `read_catalog`), or
    None; CatalogError for several, or for one whose configuration virt-api would refuse."""
    found = list(found)
    if len(found) > 1:
        raise CatalogError(f"{len(found)} KubeVirt objects under {directory} ({', '.join(str(p) for p, _ in found)}); "
                           "give at most one")
    if not found:
        return None
    path, kubevirt = found[0]
    problem = kubevirt_problem(kubevirt) if isinstance(kubevirt.get("spec", {}), Mapping) else "spec is not an object"
    if problem is not None:
        raise CatalogError(f"{path}: the KubeVirt object's configuration is invalid: {problem}")
    return kubevirt
