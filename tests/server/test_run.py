"""server/run.py: `instancetype-webhook serve` refuses bad settings with a message and exit status 2 (no
traceback), naming the flag or the environment variable; a busy port before anything says serving; /metrics on the
serving host unless --metrics-host; the TLS files it serves with (--dev's own, else both of --tls-cert/--tls-key);
the reference cache's object counts for /readyz and /metrics; uvicorn's public options it runs with; the Webhook
it builds (the start grace, /readyz naming the reference source: the bundle, the directory, or `cluster`)."""
from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from instancetype_webhook.assembly import assemble
from instancetype_webhook.cli import build_parser, main
from instancetype_webhook.cli.serve import settings_from
from instancetype_webhook.kubevirt.source import InMemorySource
from instancetype_webhook.server import run
from instancetype_webhook.server.app import create_app
from instancetype_webhook.server.run import ServeError, cache_objects, metrics_host, tls_files, transport_options
from instancetype_webhook.settings import ServerSettings
from tests.kit.builders import instancetype, vm


@pytest.mark.parametrize("argv, env, message", [
    (["--kubeconfig", "/nonexistent", "--dev"], {}, "cannot load the kubeconfig /nonexistent"),
    (["--in-cluster", "--dev"], {}, "cannot load the in-cluster configuration"),
    (["--port", "18999"], {}, "TLS is required"),
    (["--catalog", "/nonexistent", "--dev"], {}, "not a directory"),
    (["--dev"], {"INSTANCETYPE_WEBHOOK_POLICY": "bogus"},
     "serve: INSTANCETYPE_WEBHOOK_POLICY='bogus': Input should be"),
    (["--dev", "--port", "70000"], {}, "serve: --port: Input should be less than or equal to 65535"),
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


def test_serve_uses_uvicorns_public_options():
    options = transport_options()
    assert options["loop"] == "auto" and options["proxy_headers"] is False
    assert options["http"].__name__ == "CoalescingHttpToolsProtocol"  # uvicorn's own, each answer in one write


def test_tls_files_are_both_given_or_dev_s_own(tmp_path: Path):
    cert, key = tmp_path / "tls.crt", tmp_path / "tls.key"
    assert tls_files(ServerSettings(tls_cert=cert, tls_key=key)) == (cert, key)
    with pytest.raises(ServeError, match="TLS is required"):
        tls_files(ServerSettings(tls_cert=cert))
    with pytest.raises(ServeError, match="TLS is required"):
        tls_files(ServerSettings())
    with pytest.raises(ServeError, match="--dev makes its own certificate"):
        tls_files(ServerSettings(dev=True, tls_key=key))
    dev_cert, dev_key = tls_files(ServerSettings(dev=True))
    assert dev_cert.is_file() and dev_key.is_file() and dev_cert.parent == dev_key.parent
    assert b"BEGIN CERTIFICATE" in dev_cert.read_bytes()


def test_cache_objects_counts_per_resource():
    source = InMemorySource([instancetype("a"), instancetype("b"), instancetype("c", namespace="ns"),
                             vm("v", instancetype="a")], default_namespace="ns")
    assert cache_objects(source) == {"virtualmachineclusterinstancetypes": 2, "virtualmachineinstancetypes": 1,
                                     "virtualmachines": 1}
    assert cache_objects(InMemorySource()) == {}


def test_cache_objects_of_a_watching_source_counts_its_informers():
    class Informer:
        def __init__(self, name: str, n: int):
            self.name, self.store = name, dict.fromkeys(range(n))

    class Watching:
        informers = {"it": Informer("virtualmachineinstancetypes", 3), "p": Informer("virtualmachinepreferences", 0)}

    assert cache_objects(Watching()) == {"virtualmachineinstancetypes": 3, "virtualmachinepreferences": 0}


class Said:
    """run.log, recorded: what the server told the user, in order."""

    def __init__(self):
        self.lines: list[str] = []

    def log(self, _level, msg, *args):
        self.lines.append(msg % args)

    def info(self, msg, *args):
        self.log(0, msg, *args)

    warning = error = info


@pytest.fixture
def said(monkeypatch, app_logging):
    recorder = Said()
    monkeypatch.setattr(run, "log", recorder)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    return recorder


@pytest.fixture
def served(monkeypatch):
    """Where /metrics was asked to listen, and the server run with no loop (it returns at once)."""
    calls: list[tuple[int, str]] = []
    monkeypatch.setattr(run.Metrics, "serve", lambda self, port, host="": calls.append((port, host)))
    monkeypatch.setattr(run.DrainingServer, "run", lambda self, sockets=None: None)
    return calls


@pytest.mark.parametrize(("given", "expected"), [
    ({"host": "127.0.0.1"}, "127.0.0.1"),
    ({"host": "127.0.0.1", "metrics_host": "0.0.0.0"}, "0.0.0.0"),
    ({}, "0.0.0.0"),  # the default host: every address, /metrics too (Prometheus scrapes the pod)
])
def test_metrics_listen_on_the_serving_host_unless_metrics_host(given, expected, said, served):
    settings = ServerSettings(dev=True, port=0, metrics_port=18080, **given)
    assert metrics_host(settings) == expected
    assert run.serve(settings) == 0
    assert served == [(18080, expected)]


def test_the_serving_line_names_the_port_the_system_chose(said, served):
    assert run.serve(ServerSettings(dev=True, host="127.0.0.1", port=0, metrics_port=0)) == 0
    serving = next(line for line in said.lines if line.startswith("serving "))
    port = int(serving.split(":")[2].split(" ")[0])
    assert port > 0 and served == []


@pytest.mark.parametrize("which", ["port", "metrics_port"])
def test_a_busy_port_is_a_serve_error_before_anything_says_serving(which, said, monkeypatch):
    import socket

    monkeypatch.setattr(run.DrainingServer, "run", lambda self, sockets=None: pytest.fail("ran on a busy port"))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        settings = ServerSettings(dev=True, host="127.0.0.1", **{"port": 0, "metrics_port": 0, which: busy})
        with pytest.raises(ServeError, match=f"127.0.0.1:{busy}: address already in use"):
            run.serve(settings)
    assert not [line for line in said.lines if line.startswith(("serving", "playground"))]


def test_metrics_host_is_a_serve_flag_and_an_environment_variable(monkeypatch):
    assert settings_from(build_parser().parse_args(["serve", "--metrics-host", "10.0.0.1"])).metrics_host == "10.0.0.1"
    monkeypatch.setenv("INSTANCETYPE_WEBHOOK_METRICS_HOST", "10.0.0.2")
    assert settings_from(build_parser().parse_args(["serve"])).metrics_host == "10.0.0.2"


def readyz(settings: ServerSettings) -> tuple[int, dict]:
    """/readyz of the Webhook `serve` builds for `settings` (in process; the source stopped afterwards)."""
    built = assemble(settings)
    try:
        hook = run.webhook(settings, built)
        assert hook.start_grace == settings.start_grace
        answer = TestClient(create_app(hook)).get("/readyz")
        return answer.status_code, answer.json()
    finally:
        built.stop()


@pytest.mark.parametrize("release, bundle", [
    ("auto", "common-instancetypes v1.6.0-90-g7c1e305b (the project's bundle, used when answering as main)"),
    ("v1.8.4", "common-instancetypes v1.6.0 (the bundle KubeVirt v1.8.x deploys)"),
])
def test_readyz_names_the_bundle_the_bundled_catalogue_serves(release: str, bundle: str):
    status, body = readyz(ServerSettings(kubevirt_version=release))
    assert status == 200 and body["referenceSource"] == f"bundled catalogue {bundle}"
    assert body["kubevirt"]["profile"] == ("main" if release == "auto" else "v1.8")  # the fields before, as they were


def test_readyz_names_a_catalogue_directory(tmp_path: Path):
    (tmp_path / "it.yaml").write_text("apiVersion: instancetype.kubevirt.io/v1beta1\n"
                                      "kind: VirtualMachineClusterInstancetype\nmetadata: {name: it}\n"
                                      "spec: {cpu: {guest: 1}, memory: {guest: 1Gi}}\n")
    status, body = readyz(ServerSettings(catalog=tmp_path))
    assert status == 200 and body["referenceSource"] == f"catalog {tmp_path}"
    assert "bundle" not in body["referenceSource"]


def test_readyz_says_cluster_and_no_bundle_for_a_cluster_source(fake, tmp_path: Path):
    fake.add(instancetype("u1", 2))
    status, body = readyz(ServerSettings(kubeconfig=Path(fake.kubeconfig_file(tmp_path)), start_grace=0))
    assert status == 200 and body["referenceSource"] == "cluster"
    assert "referenceCache" in body
