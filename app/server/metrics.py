"""Prometheus metrics of the webhook, in a registry of their own, served on plain HTTP (--metrics-port)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server

if TYPE_CHECKING:
    from app.kubevirt.settings import ClusterSettings

BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter(
            "instancetype_webhook_requests", "Admission reviews answered",
            ("endpoint", "operation", "kind", "outcome"), registry=self.registry)
        self.latency = Histogram(
            "instancetype_webhook_request_duration_seconds", "Time to answer a request",
            ("endpoint",), buckets=BUCKETS, registry=self.registry)
        self.in_flight = Gauge(
            "instancetype_webhook_requests_in_flight", "Requests being answered", registry=self.registry)
        self.errors = Counter(
            "instancetype_webhook_errors", "Requests that could not be answered normally",
            ("endpoint", "reason"), registry=self.registry)
        self._children: dict[tuple[str, str, str, str], tuple] = {}
        self.tls_reloads = Counter(
            "instancetype_webhook_tls_reloads", "Certificate reloads", registry=self.registry)
        self.config_generation = Gauge(
            "instancetype_webhook_cluster_configuration_generation",
            "metadata.generation of the KubeVirt CR whose configuration is in use (0: KubeVirt's defaults)",
            registry=self.registry)
        self.config_info = Gauge(
            "instancetype_webhook_cluster_configuration_info",
            "The cluster configuration in use: 1 for the KubeVirt CR (or `defaults`) and its resourceVersion",
            ("origin", "generation", "resource_version"), registry=self.registry)
        self.config_changes = Counter(
            "instancetype_webhook_cluster_configuration_changes", "Cluster configurations taken into use",
            registry=self.registry)

    def observe(self, endpoint: str, operation: str, kind: str, outcome: str, seconds: float) -> None:
        # The labelled children are cached: labels() takes a lock and builds a key on every call.
        key = (endpoint, operation, kind, outcome)
        children = self._children.get(key)
        if children is None:
            children = self._children[key] = (self.requests.labels(*key), self.latency.labels(endpoint))
        children[0].inc()
        children[1].observe(seconds)

    def configuration(self, settings: "ClusterSettings") -> None:
        """The cluster configuration now in use (called at start and on every change)."""
        self.config_generation.set(settings.generation)
        self.config_info.clear()
        self.config_info.labels(settings.origin, str(settings.generation), settings.resource_version).set(1)
        self.config_changes.inc()

    def error(self, endpoint: str, reason: str) -> None:
        self.errors.labels(endpoint, reason).inc()

    def serve(self, port: int, host: str = "") -> None:
        """Start the plain-HTTP /metrics server in a daemon thread."""
        start_http_server(port, addr=host or "0.0.0.0", registry=self.registry)
