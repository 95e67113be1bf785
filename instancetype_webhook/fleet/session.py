"""Connect to a cluster for audit/sweep: the VM client, and the same reference source and review
context the webhook builds (`serve --kubeconfig|--in-cluster`), so the decision is the webhook's."""
from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from instancetype_webhook.admission.context import ReviewContext
from instancetype_webhook.settings import ServerSettings
from instancetype_webhook.sources.kube import VMClient


class SessionError(RuntimeError):
    """The cluster cannot be used (bad kubeconfig, instance types not listable in time)."""


@dataclass
class Session:
    client: VMClient
    ctx: ReviewContext
    source: Any
    namespace: str  # the kubeconfig context's namespace (used without -n/-A)

    def close(self) -> None:
        stop = getattr(self.source, "stop", None)
        if stop:
            stop()


def open_session(kubeconfig: str | Path | None, in_cluster: bool, sync_timeout: float = 60.0, page_size: int = 500,
                 **settings: Any) -> Session:
    """`settings`: ServerSettings given as serve's flags would be (policy, allow_vm_policy, provenance,
    preserve_guest, ...); the INSTANCETYPE_WEBHOOK_* environment fills in the rest, as it does for serve."""
    from instancetype_webhook.sources.cluster import ClusterSource

    try:
        config = ServerSettings(**settings)
    except ValueError as exc:  # pydantic's ValidationError: a bad --kubevirt-version, policy, ...
        raise SessionError("; ".join(f"--{str(e['loc'][-1]).replace('_', '-')}: {e['msg']}"
                                     for e in getattr(exc, "errors", lambda: [])()) or str(exc)) from exc
    try:
        client, namespace = VMClient.from_config(kubeconfig, in_cluster, page_size=page_size)
        source = ClusterSource.from_config(kubeconfig=kubeconfig, in_cluster=in_cluster,
                                           release=config.release_override())
    except Exception as exc:  # ConfigException, unreadable or malformed files
        where = "in-cluster configuration" if in_cluster else f"kubeconfig {kubeconfig or '(default)'}"
        raise SessionError(f"cannot load the {where}: {exc}") from exc
    source.start()
    if not source.wait_synced(sync_timeout):
        source.stop()
        raise SessionError(f"instance types and preferences not listed within {sync_timeout:g}s "
                           f"(is the API server at {client.host} reachable, and may this account list them?)")
    return Session(client, review_context(config, source), source, namespace)


def review_context(settings: ServerSettings, source: Any) -> ReviewContext:
    """The context `serve` builds from the same settings (flags and INSTANCETYPE_WEBHOOK_* variables):
    every ReviewContext option named like a setting is copied, and the cluster configuration follows
    the source's KubeVirt CR as the webhook's does."""
    shared = {f.name: getattr(settings, f.name) for f in fields(ReviewContext)
              if f.name not in ("source", "policy", "cluster", "namespace_labels", "extra")
              and hasattr(settings, f.name)}
    ctx = ReviewContext(source=source, policy=settings.policy, cluster=settings.cluster(),
                        namespace_labels=getattr(source, "namespace_labels", None),
                        **{**shared, "vm_policy_overrides": settings.allow_vm_policy})
    configuration = getattr(source, "configuration", None)
    if configuration is not None:
        configuration.subscribe(lambda cluster: setattr(ctx, "cluster", cluster))
    return ctx
