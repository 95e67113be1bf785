"""`instancetype-webhook serve` refuses bad settings with a message and exit status 2 (no traceback)."""
from __future__ import annotations

import pytest

from instancetype_webhook.cli import build_parser, main
from instancetype_webhook.cli.serve import settings_from


@pytest.mark.parametrize("argv, env, message", [
    (["--kubeconfig", "/nonexistent", "--dev"], {}, "cannot load the kubeconfig /nonexistent"),
    (["--in-cluster", "--dev"], {}, "cannot load the in-cluster configuration"),
    (["--port", "18999"], {}, "TLS is required"),
    (["--catalog", "/nonexistent", "--dev"], {}, "not a directory"),
    (["--dev"], {"INSTANCETYPE_WEBHOOK_POLICY": "bogus"}, "--policy"),
    (["--dev", "--tls-cert", "/x"], {}, "--dev makes its own certificate"),
])
def test_bad_settings_exit_2(argv, env, message, monkeypatch, capsys, app_logging):
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert main(["serve", *argv]) == 2
    assert message in capsys.readouterr().err


def test_flags_win_over_environment(monkeypatch):
    monkeypatch.setenv("INSTANCETYPE_WEBHOOK_POLICY", "expandAll")
    monkeypatch.setenv("INSTANCETYPE_WEBHOOK_PORT", "9443")
    args = build_parser().parse_args(["serve", "--policy", "expand"])
    settings = settings_from(args)
    assert settings.policy == "expand" and settings.port == 9443 and settings.metrics_port == 8080
