"""instancetype_webhook.fleet.session: audit/sweep build the webhook's review context from the same settings as
serve."""
from __future__ import annotations

from instancetype_webhook.cli import build_parser
from instancetype_webhook.cli.fleet import server_settings
from instancetype_webhook.fleet.session import review_context
from instancetype_webhook.kubevirt.source import InMemorySource
from instancetype_webhook.settings import ServerSettings


def test_context_copies_the_serve_settings():
    settings = ServerSettings(policy="expand", allow_vm_policy=True, provenance=False, preserve_guest=True)
    ctx = review_context(settings, InMemorySource())
    assert (ctx.policy, ctx.vm_policy_overrides, ctx.provenance, ctx.preserve_guest) == ("expand", True, False, True)
    assert ctx.cluster == settings.cluster() and ctx.namespace_labels is None


def test_unset_flags_leave_the_environment_to_decide(monkeypatch):
    monkeypatch.setenv("INSTANCETYPE_WEBHOOK_PRESERVE_GUEST", "true")
    monkeypatch.setenv("INSTANCETYPE_WEBHOOK_ALLOW_VM_POLICY", "true")
    args = build_parser().parse_args(["sweep", "-A", "--no-provenance"])
    given = server_settings(args)
    assert given == {"policy": "expandAll", "provenance": False}
    settings = ServerSettings(**given)
    assert settings.preserve_guest and settings.allow_vm_policy and not settings.provenance
