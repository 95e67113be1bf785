"""The arguments every install path hands `instancetype-webhook serve` are accepted by the real CLI."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from instancetype_webhook.cli import build_parser
from instancetype_webhook.cli.serve import settings_from

ROOT = Path(__file__).resolve().parents[2]


def serve_settings(args: list[str]):
    parsed = build_parser().parse_args(["serve", *args])
    assert parsed.command == "serve"
    return settings_from(parsed)


def deployment_args(objs: list[dict]) -> list[str]:
    (deploy,) = [o for o in objs if o["kind"] == "Deployment"]
    (container,) = deploy["spec"]["template"]["spec"]["containers"]
    return container["args"]


def test_plain_manifest_args():
    objs = list(yaml.safe_load_all((ROOT / "webhook_config" / "deployment.yaml").read_text()))
    settings = serve_settings(deployment_args(objs))
    assert (settings.host, settings.port, settings.metrics_port) == ("0.0.0.0", 8443, 8080)
    assert str(settings.tls_cert) == "/etc/instancetype-webhook/tls/tls.crt"
    assert str(settings.tls_key) == "/etc/instancetype-webhook/tls/tls.key"
    assert (settings.policy, settings.in_cluster, settings.catalog, settings.dev) == ("reference", True, None, False)


@pytest.mark.parametrize("values,expect", [
    (None, {"policy": "reference", "in_cluster": True, "tls_min_version": "1.2"}),
    ({"policy": "expandAll", "tls": {"minVersion": "1.3"}, "catalog": {"directory": "/catalog"}},
     {"policy": "expandAll", "in_cluster": False, "tls_min_version": "1.3"}),
])
def test_chart_args(values, expect):
    from tests.kit.chart import install

    objs, _ = install(values)
    settings = serve_settings(deployment_args(objs))
    assert {k: getattr(settings, k) for k in expect} == expect
    assert settings.port == 8443 and settings.tls_cert is not None and settings.tls_key is not None


def test_dockerfile_default_command():
    text = (ROOT / "Dockerfile").read_text()
    entrypoint = json.loads(re.search(r"^ENTRYPOINT (.*)$", text, re.M).group(1))
    cmd = json.loads(re.search(r"^CMD (.*)$", text, re.M).group(1))
    assert entrypoint == ["instancetype-webhook", "serve"]
    settings = serve_settings(cmd)
    assert settings.dev is True and settings.host == "0.0.0.0" and settings.port == 8443


def test_chart_preserve_guest_and_kubevirt_cr():
    from tests.kit.chart import install

    objs, _ = install({"preserveGuest": True, "kubevirtCR": "kubevirt/kubevirt"})
    settings = serve_settings(deployment_args(objs))
    assert (settings.preserve_guest, settings.kubevirt) == (True, "kubevirt/kubevirt")
    default = serve_settings(deployment_args(install(None)[0]))
    assert (default.preserve_guest, default.kubevirt) == (False, None)


def test_chart_resize_handwritten():
    from tests.kit.chart import install

    assert serve_settings(deployment_args(install(None)[0])).resize_handwritten is True
    off = serve_settings(deployment_args(install({"resize": {"handwritten": False}})[0]))
    assert off.resize_handwritten is False
    assert serve_settings(["--no-resize-handwritten"]).resize_handwritten is False


def test_chart_workers():
    from tests.kit.chart import install

    assert serve_settings(deployment_args(install(None)[0])).workers == 1
    assert serve_settings(deployment_args(install({"workers": 4})[0])).workers == 4


def test_chart_start_grace():
    from tests.kit.chart import install

    assert serve_settings(deployment_args(install(None)[0])).start_grace == 60
    assert serve_settings(deployment_args(install({"startGrace": 7.5})[0])).start_grace == 7.5
    assert serve_settings(deployment_args(install({"startGrace": 0})[0])).start_grace == 0
