"""One review context from the run settings, for every entry: `serve`, `audit`, `sweep` and the playground.

    assemble(settings, live=None, objects=()) -> Assembly(source, ctx, configuration, ready, offload, where)
    Assembly.source_name() -> "cluster", "catalog DIR" or "bundled catalogue common-instancetypes VERSION (...)"

From the same `ServerSettings` (flags and INSTANCETYPE_WEBHOOK_* variables) every entry gets the same reference
source (a live cluster with its lookup timeout, pinned KubeVirt CR, fallback configuration and release; or the
catalogue), the same cluster configuration (the KubeVirt CR followed live; offline a KubeVirt object in
--catalog, else the defaults with any INSTANCETYPE_WEBHOOK_CLUSTER_* settings), and the same ReviewContext,
so that audit and sweep decide a VM exactly as the webhook does.
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields
from typing import Any

from instancetype_webhook.admission.context import ReviewContext
from instancetype_webhook.kubevirt.configuration import settings_from_kubevirt
from instancetype_webhook.kubevirt.releases import ReleaseProfile, defaulted, from_kubevirt
from instancetype_webhook.settings import ServerSettings
from instancetype_webhook.sources.catalog import CatalogError, CatalogSource, load_catalog, read_catalog
from instancetype_webhook.sources.kubevirt_cr import ClusterConfiguration, kubevirt_among

log = logging.getLogger("instancetype_webhook.assembly")

# ReviewContext members that are not settings of the same name (the rest are copied from ServerSettings)
_NOT_COPIED = ("source", "policy", "cluster", "namespace_labels", "vm_policy_overrides")


class AssemblyError(RuntimeError):
    """The reference source cannot be set up with these settings (a bad kubeconfig, an unreadable catalogue)."""


@dataclass
class Assembly:
    source: Any  # kubevirt.source.Source: sources.cluster.ClusterSource or sources.catalog's InMemorySource
    ctx: ReviewContext
    configuration: ClusterConfiguration
    ready: Callable[[], bool]
    offload: bool  # reviews may need a live lookup: answer them off the event loop
    where: str  # "cluster (...)", "catalog DIR" or "bundled catalogue", for the logs

    def source_name(self) -> str:
        """The reference source as /readyz names it: offline what the log says (`bundled catalogue
        common-instancetypes v1.6.0 (the bundle KubeVirt v1.8.x deploys)`, `catalog DIR`); live `cluster`
        (which kubeconfig is the log's business, not a probe's)."""
        return self.where if isinstance(self.source, CatalogSource) else "cluster"

    def describe(self) -> dict[str, Any]:
        """What decides a review, as plain values: equal for two assemblies that answer every review alike."""
        ctx = {f.name: getattr(self.ctx, f.name) for f in fields(ReviewContext) if f.name != "source"}
        ctx["namespace_labels"] = ctx["namespace_labels"] is not None
        source = {name: getattr(self.source, name, None) for name in ("lookup_timeout", "stale_after")}
        configuration = self.configuration
        return {"ctx": ctx, "source": {**source, "kind": type(self.source).__name__, "where": self.where},
                "configuration": {"fallback": configuration.fallback, "pinned": configuration.pinned,
                                  "release": configuration.release_override, "settings": configuration.settings}}

    def stop(self) -> None:
        stop = getattr(self.source, "stop", None)
        if stop is not None:
            stop()


def assemble(settings: ServerSettings, live: bool | None = None, objects: Iterable[dict[str, Any]] = ()) -> Assembly:
    """The source, configuration and context for `settings`; `live` (default: a kubeconfig or --in-cluster is
    given) reads a cluster, where None as the kubeconfig is the client's default ($KUBECONFIG, ~/.kube/config).
    `objects` are added to an offline catalogue (the playground's -f files). A live source is started."""
    live = bool(settings.kubeconfig or settings.in_cluster) if live is None else live
    offline = None if live else _offline(settings)
    if offline is None:
        source, ready, where = _cluster_source(settings)
    else:
        source, ready, where = _catalog_source(settings, offline)
        for obj in objects:
            source.add(obj)
    namespace_labels = source.namespace_labels if live else None
    copied = {f.name: getattr(settings, f.name) for f in fields(ReviewContext)
              if f.name not in _NOT_COPIED and hasattr(settings, f.name)}
    ctx = ReviewContext(source=source, policy=settings.policy, cluster=settings.cluster(),
                        namespace_labels=namespace_labels, vm_policy_overrides=settings.allow_vm_policy, **copied)
    configuration = source.configuration if offline is None else _offline_configuration(settings, offline)
    configuration.subscribe(lambda cluster: setattr(ctx, "cluster", cluster))
    if live:
        source.start()
        overridden = _overridden(settings)
        if overridden:
            log.warning("%s: used only while there is no usable KubeVirt CR; the CR's configuration wins", overridden)
    return Assembly(source, ctx, configuration, ready, live, where)


def _cluster_source(settings: ServerSettings) -> tuple[Any, Callable[[], bool], str]:
    from instancetype_webhook.sources.cluster import ClusterSource

    try:
        source = ClusterSource.from_config(kubeconfig=settings.kubeconfig, in_cluster=settings.in_cluster,
                                           lookup_timeout=settings.lookup_timeout, kubevirt=settings.kubevirt,
                                           watch_timeout=settings.watch_timeout,
                                           bookmark_interval=settings.watch_bookmark_interval,
                                           cluster_fallback=settings.cluster(), release=settings.release_override())
    except Exception as exc:  # ConfigException, unreadable or malformed files
        where = ("in-cluster configuration" if settings.in_cluster
                 else f"kubeconfig {settings.kubeconfig or '(default)'}")
        raise AssemblyError(f"cannot load the {where}: {exc}") from exc
    where = str(settings.kubeconfig or ("in-cluster" if settings.in_cluster else "default kubeconfig"))
    return source, source.ready, f"cluster ({where})"


@dataclass
class _Offline:
    """What --catalog holds, read once: its reference objects (None: the bundle) and its KubeVirt object."""

    read: list[dict[str, Any]] | None
    kubevirt: Any


def _offline(settings: ServerSettings) -> _Offline:
    if not settings.catalog:
        return _Offline(None, None)
    try:
        read, found = read_catalog(settings.catalog, "KubeVirt")
        return _Offline(read, kubevirt_among(found, settings.catalog))
    except CatalogError as exc:
        raise AssemblyError(str(exc)) from exc


def _catalog_source(settings: ServerSettings, offline: _Offline) -> tuple[Any, Callable[[], bool], str]:
    try:
        catalog = load_catalog(settings.catalog, release=offline_release(settings, offline), read=offline.read)
    except CatalogError as exc:
        raise AssemblyError(str(exc)) from exc
    return catalog, lambda: True, f"catalog {settings.catalog}" if settings.catalog else catalog.description


def offline_release(settings: ServerSettings, offline: _Offline) -> ReleaseProfile:
    """The release answered as without a cluster: --kubevirt-version, else (`auto`) the one a KubeVirt object
    in --catalog reports, else main (saying so)."""
    override = settings.release_override()
    if override is not None:
        return override
    kubevirt = offline.kubevirt
    return from_kubevirt(kubevirt) if kubevirt is not None else defaulted("no KubeVirt CR offline")


def _overridden(settings: ServerSettings) -> str:
    return ", ".join(f"INSTANCETYPE_WEBHOOK_{name.upper()}" for name in settings.cluster_overridden())


def _offline_configuration(settings: ServerSettings, offline: _Offline) -> ClusterConfiguration:
    """Offline: a KubeVirt object in the --catalog directory is the configuration, else the defaults (with any
    INSTANCETYPE_WEBHOOK_CLUSTER_* settings)."""
    kubevirt = offline.kubevirt
    if kubevirt is not None:
        release = offline_release(settings, offline)
        return ClusterConfiguration(settings_from_kubevirt(kubevirt, release=release), release=release)
    configuration = ClusterConfiguration(settings.cluster(), release=settings.release_override())
    overridden = _overridden(settings)
    configuration.unavailable("no KubeVirt CR offline" + (f" ({overridden})" if overridden else ""))
    return configuration
