"""Server settings: every `serve` flag is also an environment variable `INSTANCETYPE_WEBHOOK_<NAME>`.

Precedence: command-line flag > environment variable > default.

The cluster configuration comes from the KubeVirt CR (`--kubevirt NAMESPACE/NAME`, else the one found in
any namespace), watched live. The `cluster_*` settings (INSTANCETYPE_WEBHOOK_CLUSTER_*) are demoted: they
are the configuration only while no usable KubeVirt CR exists (the offline catalogue, or a cluster without
KubeVirt); a live CR always wins over them.
"""
from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from instancetype_webhook.kubevirt.configuration import ClusterSettings
from instancetype_webhook.kubevirt.releases import ReleaseProfile, resolve

Policy = Literal["reference", "expand", "expandAll"]
POLICIES: tuple[str, ...] = ("reference", "expand", "expandAll")
ENV_PREFIX = "INSTANCETYPE_WEBHOOK_"
MiB = 1024 * 1024
# Seconds after its start a replica turns ready even though its reference source has not synced yet (the API
# server away during a rollout): it then answers the reviews that need no lookup, and refuses the others with a
# retryable error, like a replica whose source fell out of sync later (server.asgi.Webhook.is_ready).
START_GRACE = 60.0


class ServerSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="ignore", frozen=True)

    host: str = "0.0.0.0"
    port: int = Field(8443, ge=0, le=65535)
    tls_cert: Path | None = None
    tls_key: Path | None = None
    tls_client_ca: Path | None = None
    tls_min_version: Literal["1.2", "1.3"] = "1.2"
    tls_reload_interval: float = Field(1.0, gt=0, description="seconds between checks of the cert/key files")
    dev: bool = False
    policy: Policy = "reference"
    allow_vm_policy: bool = False  # honour the VM annotation instancetype-webhook.kubevirt.io/policy
    kubeconfig: Path | None = None
    in_cluster: bool = False
    catalog: Path | None = None
    workers: int = Field(1, ge=1, le=64,
                         description="processes sharing the port (SO_REUSEPORT), each with its own caches")
    metrics_port: int = Field(8080, ge=0, le=65535)
    metrics_host: str = ""
    log_level: str = "info"
    log_allowed: int = Field(100, ge=0, description="a review line for 1 in N allowed reviews that change nothing, "
                                                     "carrying \"sampled\": N (1: every one, 0: none; every one at "
                                                     "log level debug); refusals, errors and patches always get one")
    # Limits and time budget (the reliability settings build on these).
    max_body_bytes: int = Field(8 * MiB, gt=0, description="larger request bodies get 413 unread")
    max_json_depth: int = Field(200, gt=0)
    review_deadline: float = Field(8.0, gt=0, description="seconds; below the webhook's timeoutSeconds (10)")
    deadline_action: Literal["deny", "allow"] = "deny"
    lookup_timeout: float = Field(2.0, gt=0, description="seconds for a live GET on a cache miss")
    # The cache's watches (sources/cluster.py): a watch silent (no event, no bookmark) for 1.25 bookmark
    # intervals is presumed dead (out of sync, relisted); the server ends each after watch_timeout seconds.
    watch_bookmark_interval: float = Field(
        60.0, gt=0, description="seconds between the API server's bookmarks on a quiet watch (kube-apiserver: "
        "about 60); a watch silent for 1.25 times this is presumed dead, marked out of sync and relisted")
    watch_timeout: int = Field(300, gt=0, description="seconds after which the API server ends a watch "
                               "(timeoutSeconds); it is resumed at once")
    start_grace: float = Field(START_GRACE, ge=0,
                               description="seconds after the start a replica turns ready even though its reference "
                               "source has not synced (the API server away during a rollout); the reviews that need "
                               "a lookup then get a retryable refusal until it has")
    shutdown_delay: float = Field(2.0, ge=0,
                                  description="seconds /readyz reports false after SIGTERM before the listener closes")
    shutdown_grace: float = Field(10.0, ge=0, description="seconds to drain in-flight requests after that")
    provenance: bool = True
    kubevirt: str | None = Field(None, description="NAMESPACE/NAME of the KubeVirt CR (default: the one found)")
    # The KubeVirt release answered as: `auto` reads the KubeVirt CR's status.observedKubeVirtVersion (offline:
    # a KubeVirt object in --catalog, else main); anything else names the release (kubevirt.releases.resolve).
    kubevirt_version: str = "auto"
    preserve_guest: bool = False  # write the auto-attached devices into flat VMs (a divergence from upstream)
    resize_handwritten: bool = True  # resize hand-written flat VMs when they name an instance type
    # The configuration without a usable KubeVirt CR (upstream defaults; the CR wins when there is one).
    cluster_architecture: str = "amd64"
    cluster_machine_type: str = "q35"
    cluster_network_binding: str = "bridge"
    cluster_permit_bridge_on_pod_network: bool = True
    cluster_eviction_strategy: str = "None"
    cluster_cpu_request: str = "100m"
    cluster_memory_overcommit: int = 100

    @field_validator("tls_min_version", mode="before")
    @classmethod
    def _version(cls, value: object) -> object:
        return {"TLSv1.2": "1.2", "TLSv1.3": "1.3", "1.2": "1.2", "1.3": "1.3"}.get(str(value), value)

    @field_validator("kubevirt")
    @classmethod
    def _kubevirt(cls, value: str | None) -> str | None:
        if value is not None and (value.count("/") != 1 or not all(value.split("/"))):
            raise ValueError("give the KubeVirt CR as NAMESPACE/NAME")
        return value

    @field_validator("kubevirt_version")
    @classmethod
    def _kubevirt_version(cls, value: str) -> str:
        value = value.strip()
        if not value:  # an empty flag or INSTANCETYPE_WEBHOOK_KUBEVIRT_VERSION= is a mistake, never `auto`
            raise ValueError("empty; name a release (e.g. v1.8.4, v1.9, main) or auto")
        if value.lower() != "auto":
            resolve(value)  # ValueError: names no supported release
        return value

    def release_override(self) -> ReleaseProfile | None:
        """The release --kubevirt-version names, or None for `auto` (the KubeVirt CR's)."""
        if self.kubevirt_version.lower() == "auto":
            return None
        profile = resolve(self.kubevirt_version)
        return ReleaseProfile(profile.release, profile.reported, profile.assumed, source="--kubevirt-version")

    def cluster_overridden(self) -> list[str]:
        """The INSTANCETYPE_WEBHOOK_CLUSTER_* settings given explicitly (they only apply without a KubeVirt CR)."""
        return sorted(name for name in self.model_fields_set if name.startswith("cluster_"))

    def cluster(self) -> ClusterSettings:
        return ClusterSettings(
            architecture=self.cluster_architecture,
            machine_type=self.cluster_machine_type,
            default_network_binding=self.cluster_network_binding,
            permit_bridge_on_pod_network=self.cluster_permit_bridge_on_pod_network,
            eviction_strategy=self.cluster_eviction_strategy,
            cpu_request=self.cluster_cpu_request,
            memory_overcommit=self.cluster_memory_overcommit,
            origin="environment" if self.cluster_overridden() else "defaults",
        )
