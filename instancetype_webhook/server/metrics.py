"""Prometheus metrics of the webhook, in a registry of their own, served on plain HTTP (--metrics-port).

The per-review figures (requests by endpoint/operation/kind/outcome, the latency histogram, requests
in flight) are plain integers updated on the event loop, with no lock and no metric objects on the
hot path, and turned into Prometheus families when /metrics is scraped (`ReviewCollector`): the
prometheus_client objects took a lock per update, three updates and a bucket scan per review. Rare
events (errors, certificate reloads, configuration changes) keep prometheus_client's own counters.
The server's state (ready, reference cache synced and its size, the serving certificate's notAfter,
the worker count) is read when scraped (`StateCollector`), so it is never stale.
"""
from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import orjson
from prometheus_client import CollectorRegistry, Counter, Gauge, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric

if TYPE_CHECKING:
    from instancetype_webhook.kubevirt.configuration import ClusterSettings

BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
REQUEST_LABELS = ("endpoint", "operation", "kind", "outcome")
CERTIFICATE_LABELS = ("issuer", "issuer_key_id", "fingerprint_sha256")


class Latency:
    """One endpoint's latency histogram: a count per bucket (the last one is +Inf) and the sum."""

    __slots__ = ("counts", "sum")

    def __init__(self) -> None:
        self.counts = [0] * (len(BUCKETS) + 1)
        self.sum = 0.0

    def observe(self, seconds: float) -> None:
        self.counts[bisect_left(BUCKETS, seconds)] += 1  # a bucket holds values <= its bound
        self.sum += seconds

    def cumulative(self) -> list[tuple[str, int]]:
        out, total = [], 0
        for bound, count in zip((*(repr(float(b)) for b in BUCKETS), "+Inf"), self.counts, strict=True):
            total += count
            out.append((bound, total))
        return out


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests: dict[tuple[str, str, str, str], int] = {}
        self.latency: dict[str, Latency] = {}
        self.in_flight = 0
        self.registry.register(ReviewCollector(self))
        self.errors = Counter(
            "instancetype_webhook_errors", "Requests that could not be answered normally",
            ("endpoint", "reason"), registry=self.registry)
        self.denials = Counter(
            "instancetype_webhook_denials", "Reviews answered with allowed: false, by the first cause's reason "
            "(FieldValueInvalid, ...) or, without causes, the HTTP status (NotFound, BadRequest, ...)",
            ("endpoint", "reason"), registry=self.registry)
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
        self.release_info = Gauge(
            "instancetype_webhook_kubevirt_release_info",
            "The KubeVirt release answered as: 1 for the release, its profile (release line) and where it came "
            "from (the KubeVirt CR's status, --kubevirt-version, or `default`: none known, main's rules)",
            ("release", "profile", "source"), registry=self.registry)
        self.config_changes = Counter(
            "instancetype_webhook_cluster_configuration_changes", "Cluster configurations taken into use",
            registry=self.registry)

    def state(self, state: State) -> None:
        """Report the server's state on every scrape (called once, at start)."""
        self.registry.register(StateCollector(state))

    def observe(self, endpoint: str, operation: str, kind: str, outcome: str, seconds: float) -> None:
        key = (endpoint, operation, kind, outcome)
        self.requests[key] = self.requests.get(key, 0) + 1
        latency = self.latency.get(endpoint)
        if latency is None:
            latency = self.latency[endpoint] = Latency()
        latency.observe(seconds)

    def configuration(self, settings: ClusterSettings) -> None:
        """The cluster configuration now in use (called at start and on every change)."""
        self.config_generation.set(settings.generation)
        self.config_info.clear()
        self.config_info.labels(settings.origin, str(settings.generation), settings.resource_version).set(1)
        self.release_info.clear()
        release = settings.release
        self.release_info.labels(release.name, release.line, release.source or "default").set(1)
        self.config_changes.inc()

    def denied(self, endpoint: str, body: bytes) -> None:
        """Count a denial (`body`: the AdmissionReview answer; denials are rare, so it is parsed here)."""
        self.denials.labels(endpoint, denial_reason(body)).inc()

    def error(self, endpoint: str, reason: str) -> None:
        self.errors.labels(endpoint, reason).inc()

    def serve(self, port: int, host: str = "") -> None:
        """Start the plain-HTTP /metrics server in a daemon thread."""
        start_http_server(port, addr=host or "0.0.0.0", registry=self.registry)


HTTP_REASONS = {400: "BadRequest", 403: "Forbidden", 404: "NotFound", 409: "Conflict", 413: "RequestEntityTooLarge",
                422: "Invalid", 500: "InternalError", 503: "ServiceUnavailable", 504: "Timeout"}


def denial_reason(body: bytes) -> str:
    """The first cause's reason of a denial's Status, else the name of its HTTP code."""
    try:
        status = (orjson.loads(body).get("response") or {}).get("status") or {}
    except (orjson.JSONDecodeError, AttributeError):
        return "Unknown"
    causes = (status.get("details") or {}).get("causes") or []
    if causes and isinstance(causes[0], dict) and causes[0].get("reason"):
        return str(causes[0]["reason"])[:64]
    return HTTP_REASONS.get(int(status.get("code") or 400), str(status.get("code")))


class ReviewCollector:
    """The per-review figures of a Metrics, as Prometheus families (read on each scrape)."""

    def __init__(self, metrics: Metrics):
        self.metrics = metrics

    def describe(self) -> list[Metric]:
        return list(self._families({}, {}, 0))

    def collect(self) -> Iterator[Metric]:
        m = self.metrics
        # dict(...) copies in one step under the GIL: the event loop may add a key meanwhile
        return self._families(dict(m.requests), dict(m.latency), m.in_flight)

    @staticmethod
    def _families(requests: dict[tuple[str, str, str, str], int], latency: dict[str, Latency],
                  in_flight: int) -> Iterator[Metric]:
        counter = CounterMetricFamily("instancetype_webhook_requests", "Admission reviews answered",
                                      labels=REQUEST_LABELS)
        for key, count in requests.items():
            counter.add_metric(list(key), count)
        yield counter
        histogram = HistogramMetricFamily("instancetype_webhook_request_duration_seconds", "Time to answer a request",
                                          labels=("endpoint",))
        for endpoint, hist in latency.items():
            histogram.add_metric([endpoint], hist.cumulative(), hist.sum)
        yield histogram
        yield GaugeMetricFamily("instancetype_webhook_requests_in_flight", "Requests being answered", value=in_flight)


@dataclass
class State:
    """Callables read on each scrape."""

    ready: Callable[[], bool]
    synced: Callable[[], bool]
    cache_objects: Callable[[], dict[str, int]]
    certificate_not_after: Callable[[], float | None]
    out_of_sync: Callable[[], dict[str, float]] = field(default=dict)  # seconds, by resource (0: in sync)
    certificate: Callable[[], dict[str, str]] = field(default=dict)  # issuer, issuer_key_id, fingerprint_sha256


class StateCollector:
    """ready, reference cache synced and objects, certificate notAfter, and 1 for this worker (the
    supervisor of `serve --workers N` adds the workers up: instancetype_webhook_workers is N)."""

    def __init__(self, state: State):
        self.state = state

    def describe(self) -> list[Metric]:
        return [*self._families(False, False, {}, None), *self._staleness({}), self._certificate({})]

    def collect(self) -> Iterator[Metric]:
        s = self.state
        yield from self._families(bool(s.ready()), bool(s.synced()), dict(s.cache_objects()),
                                  s.certificate_not_after())
        yield from self._staleness(dict(s.out_of_sync()))
        yield self._certificate(dict(s.certificate()))

    @staticmethod
    def _certificate(info: dict[str, str]) -> Metric:
        gauge = GaugeMetricFamily(
            "instancetype_webhook_tls_certificate_info",
            "1 for the serving certificate in use: its issuer, the issuer's key id (authority key id) and its "
            "SHA-256 fingerprint", labels=CERTIFICATE_LABELS)
        if info:
            gauge.add_metric([info.get(label, "") for label in CERTIFICATE_LABELS], 1)
        return gauge

    @staticmethod
    def _staleness(seconds: dict[str, float]) -> Iterator[Metric]:
        gauge = GaugeMetricFamily(
            "instancetype_webhook_reference_cache_out_of_sync_seconds",
            "Seconds since the resource's cache was last known in sync (0 while listed and watching); "
            "meanwhile its lookups are live GETs", labels=("resource",))
        for resource, value in sorted(seconds.items()):
            gauge.add_metric([resource], value)
        yield gauge

    @staticmethod
    def _families(ready: bool, synced: bool, objects: dict[str, int], not_after: float | None) -> Iterator[Metric]:
        yield GaugeMetricFamily("instancetype_webhook_ready",
                                "1 when /readyz answers 200 (first sync done or start grace passed, not draining)",
                                value=int(ready))
        yield GaugeMetricFamily("instancetype_webhook_reference_cache_synced",
                                "1 when every watched kind has been listed and its watch holds (0 while a watch "
                                "is broken or relisting)", value=int(synced))
        cache = GaugeMetricFamily("instancetype_webhook_reference_cache_objects", "Objects in the reference cache",
                                  labels=("resource",))
        for resource, count in sorted(objects.items()):
            cache.add_metric([resource], count)
        yield cache
        expiry = GaugeMetricFamily("instancetype_webhook_tls_certificate_not_after_timestamp_seconds",
                                   "notAfter of the serving certificate in use (Unix time)")
        if not_after is not None:
            expiry.add_metric([], not_after)
        yield expiry
        yield GaugeMetricFamily("instancetype_webhook_workers", "Processes answering reviews", value=1)
