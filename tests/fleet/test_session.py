"""instancetype_webhook.fleet.session: audit/sweep open the cluster (the fake API server) and get the webhook's
source and review context, assembled from the same settings as serve: the flags given, the INSTANCETYPE_WEBHOOK_*
environment for the rest (the lookup timeout, the pinned KubeVirt CR, the fallback cluster settings)."""
from __future__ import annotations

from pathlib import Path

import pytest

from instancetype_webhook.cli import build_parser
from instancetype_webhook.cli.fleet import server_settings
from instancetype_webhook.fleet.session import Session, SessionError, open_session
from instancetype_webhook.kubevirt.configuration import ClusterSettings
from instancetype_webhook.settings import ServerSettings
from instancetype_webhook.sources.cluster import ClusterSource
from tests.fakeapi.apiserver import FakeAPIServer
from tests.kit.wait import wait_for

KUBEVIRT = {"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
            "metadata": {"name": "kubevirt", "namespace": "kubevirt"},
            "spec": {"configuration": {"cpuRequest": "250m"}}, "status": {"phase": "Deployed"}}


@pytest.fixture
def opened(fake: FakeAPIServer, tmp_path: Path):
    """open_session(**settings) on the fake cluster; every session opened is closed after the test."""
    sessions: list[Session] = []

    def open_(**settings) -> Session:
        session = open_session(fake.kubeconfig_file(tmp_path), False, sync_timeout=10, **settings)
        sessions.append(session)
        return session

    yield open_
    for session in sessions:
        session.close()


def test_context_copies_the_serve_settings(opened):
    session = opened(policy="expand", allow_vm_policy=True, provenance=False, preserve_guest=True)
    settings = ServerSettings(policy="expand", allow_vm_policy=True, provenance=False, preserve_guest=True)
    ctx = session.ctx
    assert (ctx.policy, ctx.vm_policy_overrides, ctx.provenance, ctx.preserve_guest) == ("expand", True, False, True)
    assert ctx.cluster == settings.cluster()  # no KubeVirt CR on this cluster: the fallback settings
    assert ctx.namespace_labels == session.source.namespace_labels  # a live session reads namespace labels
    assert ctx.source is session.source and isinstance(session.source, ClusterSource)
    assert session.namespace == "default" and session.client.host == session.client.api.configuration.host


def test_unset_flags_leave_the_environment_to_decide(monkeypatch, opened):
    monkeypatch.setenv("INSTANCETYPE_WEBHOOK_PRESERVE_GUEST", "true")
    monkeypatch.setenv("INSTANCETYPE_WEBHOOK_ALLOW_VM_POLICY", "true")
    args = build_parser().parse_args(["sweep", "-A", "--no-provenance"])
    given = server_settings(args)
    assert given == {"policy": "expandAll", "provenance": False}
    settings = ServerSettings(**given)
    assert settings.preserve_guest and settings.allow_vm_policy and not settings.provenance
    ctx = opened(**given).ctx
    assert ctx.preserve_guest and ctx.vm_policy_overrides and not ctx.provenance and ctx.policy == "expandAll"


def test_the_lookup_timeout_reaches_the_source(monkeypatch, opened):
    assert opened().source.lookup_timeout == 2.0
    assert opened(lookup_timeout=0.5).source.lookup_timeout == 0.5
    monkeypatch.setenv("INSTANCETYPE_WEBHOOK_LOOKUP_TIMEOUT", "0.25")
    assert opened().source.lookup_timeout == 0.25
    assert opened(lookup_timeout=3).source.lookup_timeout == 3  # a flag wins over the environment


def test_the_kubevirt_pin_reaches_the_source(monkeypatch, fake, opened):
    fake.add(KUBEVIRT)
    unpinned = opened()
    assert unpinned.source.configuration.pinned is None
    wait_for(lambda: unpinned.ctx.cluster.cpu_request == "250m", 10, "the KubeVirt CR's configuration")
    pinned = opened(kubevirt="kubevirt/other")
    assert pinned.source.configuration.pinned == "kubevirt/other"
    wait_for(lambda: "no KubeVirt kubevirt/other found" in pinned.source.configuration.describe(), 10,
             "the pinned CR reported missing")
    assert pinned.ctx.cluster.cpu_request == "100m"  # the only CR is not the pinned one: the fallback applies
    monkeypatch.setenv("INSTANCETYPE_WEBHOOK_KUBEVIRT", "kubevirt/kubevirt")
    from_env = opened().source.configuration
    assert from_env.pinned == "kubevirt/kubevirt"


def test_the_cluster_fallback_settings_reach_the_source(monkeypatch, opened):
    assert opened().source.configuration.fallback == ClusterSettings()
    monkeypatch.setenv("INSTANCETYPE_WEBHOOK_CLUSTER_NETWORK_BINDING", "masquerade")
    monkeypatch.setenv("INSTANCETYPE_WEBHOOK_CLUSTER_CPU_REQUEST", "200m")
    session = opened()
    fallback = session.source.configuration.fallback
    assert (fallback.default_network_binding, fallback.cpu_request, fallback.origin) == ("masquerade", "200m",
                                                                                         "environment")
    assert session.ctx.cluster.default_network_binding == "masquerade"  # no KubeVirt CR: the fallback applies


def test_bad_settings_and_kubeconfigs_are_session_errors(tmp_path):
    with pytest.raises(SessionError, match="--kubevirt: "):
        open_session(None, False, kubevirt="no-slash")
    with pytest.raises(SessionError, match="--policy: "):
        open_session(None, False, policy="sometimes")
    missing = tmp_path / "missing"
    with pytest.raises(SessionError, match=f"cannot load the kubeconfig {missing}"):
        open_session(missing, False)


def test_a_cluster_that_does_not_list_in_time_is_a_session_error(fake, tmp_path):
    fake.forbid("list", "virtualmachineclusterinstancetypes")
    with pytest.raises(SessionError, match=r"not listed within 0.5s \(is the API server at http://127.0.0.1"):
        open_session(fake.kubeconfig_file(tmp_path), False, sync_timeout=0.5)
