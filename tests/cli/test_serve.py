"""`instancetype-webhook serve` up to the server (cli/serve.py): flags become ServerSettings, an unset flag falls
back to INSTANCETYPE_WEBHOOK_<FLAG> and then the default, a bad value is one line per error and exit 2, a
ServeError is one line and exit 2. The server itself is replaced here (tests/server runs it)."""
from __future__ import annotations

import os

import pytest

from instancetype_webhook.server import run as server_run
from tests.kit.cli import run_main


@pytest.fixture
def served(monkeypatch):
    """The settings `serve` was started with (the server replaced by one that records them and returns 0)."""
    seen = []

    def serve(settings, playground=None):
        seen.append(settings)
        return 0

    monkeypatch.setattr(server_run, "serve", serve)
    for name in [n for n in os.environ if n.startswith("INSTANCETYPE_WEBHOOK_")]:
        monkeypatch.delenv(name)
    return seen


def test_flags_become_the_settings(served):
    code, out, err = run_main("serve", "--dev", "--port", "9443", "--policy", "expandAll", "--no-provenance",
                              "--kubevirt", "kubevirt/kubevirt", "--kubevirt-version", "v1.8.4")
    assert (code, out, err) == (0, "", "")
    (settings,) = served
    assert (settings.dev, settings.port, settings.policy) == (True, 9443, "expandAll")
    assert (settings.provenance, settings.kubevirt, settings.kubevirt_version) == (False, "kubevirt/kubevirt",
                                                                                   "v1.8.4")


def test_unset_flags_take_the_defaults(served):
    assert run_main("serve").code == 0
    (settings,) = served
    assert (settings.port, settings.policy, settings.dev, settings.provenance) == (8443, "reference", False, True)
    assert (settings.host, settings.kubevirt, settings.kubevirt_version) == ("0.0.0.0", None, "auto")


def test_an_unset_flag_falls_back_to_the_environment_and_a_flag_wins(served, monkeypatch):
    monkeypatch.setenv("INSTANCETYPE_WEBHOOK_PORT", "9000")
    monkeypatch.setenv("INSTANCETYPE_WEBHOOK_POLICY", "expandAll")
    assert run_main("serve").code == 0
    assert run_main("serve", "--port", "9001").code == 0
    assert [(s.port, s.policy) for s in served] == [(9000, "expandAll"), (9001, "expandAll")]


def test_the_servers_exit_status_is_the_commands(monkeypatch):
    monkeypatch.setattr(server_run, "serve", lambda settings, playground=None: 1)
    assert run_main("serve", "--dev").code == 1


@pytest.mark.parametrize(("argv", "line"), [
    (["--port", "70000"], "serve: --port: Input should be less than or equal to 65535"),
    (["--workers", "0"], "serve: --workers: Input should be greater than or equal to 1"),
    (["--kubevirt", "kubevirt"], "serve: --kubevirt: Value error, give the KubeVirt CR as NAMESPACE/NAME"),
    (["--max-body-bytes", "0"], "serve: --max-body-bytes: Input should be greater than 0"),
    (["--start-grace", "-1"], "serve: --start-grace: Input should be greater than or equal to 0"),
])
def test_a_bad_value_is_one_line_and_exit_2_and_nothing_starts(served, argv, line):
    code, out, err = run_main("serve", *argv)
    assert (code, out, err) == (2, "", line + "\n")
    assert served == []


def test_every_bad_value_gets_its_line(served):
    code, _, err = run_main("serve", "--port", "-1", "--workers", "65")
    assert code == 2 and served == []
    assert [line.split(":")[1].strip() for line in err.splitlines()] == ["--port", "--workers"]


def test_a_server_that_cannot_start_is_one_line_and_exit_2(monkeypatch):
    def refuse(settings, playground=None):
        raise server_run.ServeError("TLS is required: pass --tls-cert and --tls-key, or --dev for a throw-away "
                                    "certificate")

    monkeypatch.setattr(server_run, "serve", refuse)
    code, out, err = run_main("serve")
    assert (code, out) == (2, "")
    assert err == "serve: TLS is required: pass --tls-cert and --tls-key, or --dev for a throw-away certificate\n"


def test_source_flags_are_exclusive(capsys):
    from instancetype_webhook.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["serve", "--kubeconfig", "k", "--catalog", "c"])
    assert exc.value.code == 2 and "not allowed with argument" in capsys.readouterr().err


def test_log_allowed_comes_from_the_flag_else_the_environment(served, monkeypatch):
    assert run_main("serve").code == 0
    assert run_main("serve", "--log-allowed", "1").code == 0
    monkeypatch.setenv("INSTANCETYPE_WEBHOOK_LOG_ALLOWED", "0")
    assert run_main("serve").code == 0
    assert [settings.log_allowed for settings in served] == [100, 1, 0]
    assert run_main("serve", "--log-allowed", "-1").code == 2


def test_start_grace_comes_from_the_flag_else_the_environment(served, monkeypatch):
    assert run_main("serve").code == 0
    assert run_main("serve", "--start-grace", "5").code == 0
    monkeypatch.setenv("INSTANCETYPE_WEBHOOK_START_GRACE", "0")
    assert run_main("serve").code == 0
    assert run_main("serve", "--start-grace", "2.5").code == 0
    assert [settings.start_grace for settings in served] == [60.0, 5.0, 0.0, 2.5]


def test_a_negative_start_grace_in_the_environment_is_one_line_naming_it(served, monkeypatch):
    monkeypatch.setenv("INSTANCETYPE_WEBHOOK_START_GRACE", "-5")
    code, out, err = run_main("serve")
    assert (code, out, served) == (2, "", [])
    assert err == "serve: INSTANCETYPE_WEBHOOK_START_GRACE='-5': Input should be greater than or equal to 0\n"
