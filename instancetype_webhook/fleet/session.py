"""Connect to a cluster for audit/sweep: the VM client, and the reference source and review context that
`assembly.assemble` builds for the webhook from the same settings, so the decision is the webhook's."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from instancetype_webhook.admission.context import ReviewContext
from instancetype_webhook.assembly import Assembly, AssemblyError, assemble
from instancetype_webhook.settings import ServerSettings
from instancetype_webhook.sources.kube import VMClient


class SessionError(RuntimeError):
    """The cluster cannot be used (bad kubeconfig, instance types not listable in time)."""


@dataclass
class Session:
    client: VMClient
    assembly: Assembly
    namespace: str  # the kubeconfig context's namespace (used without -n/-A)

    @property
    def ctx(self) -> ReviewContext:
        return self.assembly.ctx

    @property
    def source(self) -> Any:
        return self.assembly.source

    def close(self) -> None:
        self.assembly.stop()


def open_session(kubeconfig: str | Path | None, in_cluster: bool, sync_timeout: float = 60.0, page_size: int = 500,
                 **settings: Any) -> Session:
    """`settings`: ServerSettings given as serve's flags would be (policy, allow_vm_policy, provenance,
    preserve_guest, ...); the INSTANCETYPE_WEBHOOK_* environment fills in the rest, as it does for serve."""
    try:
        config = ServerSettings(**settings, kubeconfig=Path(kubeconfig) if kubeconfig else None, in_cluster=in_cluster)
    except ValueError as exc:  # pydantic's ValidationError: a bad --kubevirt-version, policy, ...
        raise SessionError("; ".join(f"--{str(e['loc'][-1]).replace('_', '-')}: {e['msg']}"
                                     for e in getattr(exc, "errors", lambda: [])()) or str(exc)) from exc
    try:
        client, namespace = VMClient.from_config(kubeconfig, in_cluster, page_size=page_size)
        assembly = assemble(config, live=True)
    except AssemblyError as exc:
        raise SessionError(str(exc)) from exc
    except Exception as exc:  # ConfigException, unreadable or malformed files
        where = "in-cluster configuration" if in_cluster else f"kubeconfig {kubeconfig or '(default)'}"
        raise SessionError(f"cannot load the {where}: {exc}") from exc
    if not assembly.source.wait_synced(sync_timeout):
        assembly.stop()
        raise SessionError(f"instance types and preferences not listed within {sync_timeout:g}s "
                           f"(is the API server at {client.host} reachable, and may this account list them?)")
    return Session(client, assembly, namespace)
