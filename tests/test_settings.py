"""settings.py ServerSettings: INSTANCETYPE_WEBHOOK_<NAME> from the environment (arguments win), its validators
(the KubeVirt CR as NAMESPACE/NAME, a supported --kubevirt-version or auto, the TLS version in either spelling)
and the cluster settings they give without a KubeVirt CR (origin "environment" only when one was given)."""
from __future__ import annotations

import pydantic
import pytest

from instancetype_webhook.kubevirt.configuration import DEFAULT_SETTINGS
from instancetype_webhook.settings import ENV_PREFIX, ServerSettings


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch):
    """No INSTANCETYPE_WEBHOOK_* of the test run's own environment reaches the settings."""
    import os

    for key in list(os.environ):
        if key.startswith(ENV_PREFIX):
            monkeypatch.delenv(key)


def test_defaults():
    s = ServerSettings()
    assert (s.port, s.metrics_port, s.policy, s.workers, s.tls_min_version) == (8443, 8080, "reference", 1, "1.2")
    assert s.kubevirt is None and s.kubevirt_version == "auto" and s.release_override() is None


def test_the_environment_is_read_with_the_prefix(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("INSTANCETYPE_WEBHOOK_POLICY", "expandAll")
    monkeypatch.setenv("INSTANCETYPE_WEBHOOK_PORT", "9443")
    monkeypatch.setenv("POLICY", "expand")  # without the prefix: not a setting
    s = ServerSettings()
    assert s.policy == "expandAll" and s.port == 9443


def test_arguments_win_over_the_environment(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("INSTANCETYPE_WEBHOOK_POLICY", "expandAll")
    monkeypatch.setenv("INSTANCETYPE_WEBHOOK_METRICS_PORT", "9090")
    s = ServerSettings(policy="expand")
    assert s.policy == "expand" and s.metrics_port == 9090


@pytest.mark.parametrize("field, value", [("policy", "sometimes"), ("port", 70000), ("workers", 0),
                                          ("review_deadline", 0), ("tls_min_version", "1.1")])
def test_out_of_range_values_are_refused(field: str, value: object):
    with pytest.raises(pydantic.ValidationError):
        ServerSettings(**{field: value})


@pytest.mark.parametrize("value", ["kubevirt/kubevirt", "ns/kv"])
def test_kubevirt_cr_as_namespace_slash_name(value: str):
    assert ServerSettings(kubevirt=value).kubevirt == value


@pytest.mark.parametrize("value", ["kubevirt", "a/b/c", "/kubevirt", "kubevirt/", "/"])
def test_kubevirt_cr_otherwise_refused(value: str):
    with pytest.raises(pydantic.ValidationError, match="NAMESPACE/NAME"):
        ServerSettings(kubevirt=value)


@pytest.mark.parametrize("given, expected", [("TLSv1.3", "1.3"), ("1.3", "1.3"), ("TLSv1.2", "1.2")])
def test_tls_min_version_in_either_spelling(given: str, expected: str):
    assert ServerSettings(tls_min_version=given).tls_min_version == expected


def test_kubevirt_version_auto_and_a_release():
    assert ServerSettings(kubevirt_version="AUTO").release_override() is None
    override = ServerSettings(kubevirt_version="v1.7.0").release_override()
    assert override is not None and override.source == "--kubevirt-version"
    assert (override.release.major, override.release.minor) == (1, 7)


@pytest.mark.parametrize("value", ["v1.2.0", "banana", "", "  "])
def test_kubevirt_version_naming_no_supported_release_is_refused(value: str):
    with pytest.raises(pydantic.ValidationError):
        ServerSettings(kubevirt_version=value)


def test_log_allowed_samples_1_in_100_by_default_and_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch):
    assert ServerSettings().log_allowed == 100
    monkeypatch.setenv("INSTANCETYPE_WEBHOOK_LOG_ALLOWED", "1")
    assert ServerSettings().log_allowed == 1
    assert ServerSettings(log_allowed=0).log_allowed == 0
    with pytest.raises(pydantic.ValidationError, match="log_allowed"):
        ServerSettings(log_allowed=-1)


def test_start_grace_defaults_to_a_minute_and_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch):
    assert ServerSettings().start_grace == 60.0
    monkeypatch.setenv("INSTANCETYPE_WEBHOOK_START_GRACE", "7.5")
    assert ServerSettings().start_grace == 7.5
    assert ServerSettings(start_grace=0).start_grace == 0  # ready at once


@pytest.mark.parametrize("value", [-1, -0.5, "soon"])
def test_start_grace_below_zero_or_not_a_number_is_refused(value: object):
    with pytest.raises(pydantic.ValidationError, match="start_grace"):
        ServerSettings(start_grace=value)


def test_cluster_defaults_are_upstreams():
    s = ServerSettings()
    assert s.cluster_overridden() == []
    cluster = s.cluster()
    assert cluster.origin == "defaults"
    assert (cluster.architecture, cluster.machine_type, cluster.default_network_binding, cluster.cpu_request,
            cluster.memory_overcommit) == (DEFAULT_SETTINGS.architecture, DEFAULT_SETTINGS.machine_type,
                                           DEFAULT_SETTINGS.default_network_binding, DEFAULT_SETTINGS.cpu_request,
                                           DEFAULT_SETTINGS.memory_overcommit)


def test_cluster_settings_given_are_named_and_used(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("INSTANCETYPE_WEBHOOK_CLUSTER_NETWORK_BINDING", "masquerade")
    s = ServerSettings(cluster_memory_overcommit=150)
    assert s.cluster_overridden() == ["cluster_memory_overcommit", "cluster_network_binding"]
    cluster = s.cluster()
    assert cluster.origin == "environment"
    assert cluster.default_network_binding == "masquerade" and cluster.memory_overcommit == 150
    # a setting given with its default value is still given
    assert ServerSettings(cluster_architecture="amd64").cluster().origin == "environment"
