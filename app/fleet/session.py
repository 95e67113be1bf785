"""Connect to a cluster for audit/sweep: the VM client, and the same reference source and review
context the webhook builds (`serve --kubeconfig|--in-cluster`), so the decision is the webhook's."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.fleet.kube import VMClient
from app.server.context import ReviewContext
from app.server.settings import ServerSettings


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


def open_session(kubeconfig: str | Path | None, in_cluster: bool, policy: str, allow_vm_policy: bool = False,
                 provenance: bool = True, sync_timeout: float = 60.0, page_size: int = 500) -> Session:
    from app.sources.cluster import ClusterSource

    try:
        client, namespace = VMClient.from_config(kubeconfig, in_cluster, page_size=page_size)
        source = ClusterSource.from_config(kubeconfig=kubeconfig, in_cluster=in_cluster)
    except Exception as exc:  # ConfigException, unreadable or malformed files
        where = "in-cluster configuration" if in_cluster else f"kubeconfig {kubeconfig or '(default)'}"
        raise SessionError(f"cannot load the {where}: {exc}") from exc
    source.start()
    if not source.wait_synced(sync_timeout):
        source.stop()
        raise SessionError(f"instance types and preferences not listed within {sync_timeout:g}s "
                           f"(is the API server at {client.host} reachable, and may this account list them?)")
    settings = ServerSettings(policy=policy, allow_vm_policy=allow_vm_policy, provenance=provenance)
    ctx = ReviewContext(source=source, policy=policy, cluster=settings.cluster(),
                        namespace_labels=source.namespace_labels, provenance=provenance,
                        vm_policy_overrides=allow_vm_policy)
    return Session(client, ctx, source, namespace)
