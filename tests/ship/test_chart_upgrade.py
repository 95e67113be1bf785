"""tls.source=helm keeps its certificates across upgrades: the chart looks the Secret up first.

Helm's cluster-aware render (helm-python-sdk `Config.render`, the engine `helm upgrade` uses) runs
against a small fake Kubernetes API server speaking the real discovery and GET wire protocol.
"""
from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import helm_python as helm
from cryptography import x509

from instancetype_webhook.certs import generate
from tests.kit.ship_checks import Wiring, check_ca, load_documents

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "charts" / "instancetype-webhook"
NAMESPACE, SECRET = "virt-admission", "itw-instancetype-webhook-tls"
WIRING = Wiring(namespace=NAMESPACE, service="itw-instancetype-webhook")

DISCOVERY = {
    "/api": {"kind": "APIVersions", "versions": ["v1"],
             "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]},
    "/apis": {"kind": "APIGroupList", "apiVersion": "v1", "groups": []},
    "/api/v1": {"kind": "APIResourceList", "groupVersion": "v1", "resources": [
        {"name": "secrets", "singularName": "secret", "namespaced": True, "kind": "Secret", "verbs": ["get", "list"]}]},
}


@contextmanager
def fake_api(objects: dict[str, dict]) -> Iterator[tuple[str, list[str]]]:
    """Serve discovery plus `objects` (path -> object); 404 Status otherwise. Yields (kubeconfig, request log)."""
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

        def _send(self, code: int, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            path = self.path.split("?")[0]
            seen.append(f"GET {path}")
            body = DISCOVERY.get(path) or objects.get(path)
            if body is None:
                self._send(404, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound",
                                 "message": f"{path} not found", "code": 404})
            else:
                self._send(200, body)

        def _refuse(self) -> None:
            seen.append(f"{self.command} {self.path}")
            self._send(405, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 405})

        do_POST = do_PUT = do_PATCH = do_DELETE = _refuse

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    kubeconfig = json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "fake",
        "clusters": [{"name": "fake", "cluster": {"server": f"http://127.0.0.1:{server.server_address[1]}"}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "u"}}],
    })
    try:
        yield kubeconfig, seen
    finally:
        server.shutdown()
        server.server_close()


def render_upgrade(kubeconfig: str, values: dict | None = None) -> list[dict]:
    config = helm.Config(kubeconfig_content=kubeconfig, namespace=NAMESPACE, storage_driver="memory")
    try:
        with helm.Chart.load(str(CHART)) as chart:
            rendered = config.render(chart, values, name="itw", namespace=NAMESPACE, is_upgrade=True, revision=2)
    finally:
        config.close()
    return [obj for name, text in rendered.items() if name.endswith(".yaml") for obj in load_documents(text)]


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_upgrade_reuses_the_secret_already_in_the_cluster():
    bundle = generate([f"{WIRING.service}.{NAMESPACE}.svc"])
    secret = {"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
              "metadata": {"name": SECRET, "namespace": NAMESPACE},
              "data": {"ca.crt": b64(bundle.ca_cert_pem), "tls.crt": b64(bundle.cert_pem),
                       "tls.key": b64(bundle.key_pem)}}
    with fake_api({f"/api/v1/namespaces/{NAMESPACE}/secrets/{SECRET}": secret}) as (kubeconfig, seen):
        objs = render_upgrade(kubeconfig)
    assert f"GET /api/v1/namespaces/{NAMESPACE}/secrets/{SECRET}" in seen
    assert all(line.startswith("GET ") for line in seen)  # rendering writes nothing
    (rendered,) = [o for o in objs if o["kind"] == "Secret"]
    assert rendered["data"] == secret["data"]
    assert check_ca(objs, WIRING) == "caBundle"  # the kept serving certificate verifies against the kept CA
    bundles = {h["clientConfig"]["caBundle"] for o in objs if o["kind"].endswith("WebhookConfiguration")
               for h in o["webhooks"]}
    assert bundles == {secret["data"]["ca.crt"]}


def test_first_install_generates_when_there_is_no_secret():
    with fake_api({}) as (kubeconfig, seen):
        objs = render_upgrade(kubeconfig)
    assert f"GET /api/v1/namespaces/{NAMESPACE}/secrets/{SECRET}" in seen
    assert check_ca(objs, WIRING) == "caBundle"


def test_a_partial_secret_is_replaced_not_reused():
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": SECRET, "namespace": NAMESPACE},
              "data": {"tls.crt": "Zm9v"}}
    with fake_api({f"/api/v1/namespaces/{NAMESPACE}/secrets/{SECRET}": secret}) as (kubeconfig, _):
        objs = render_upgrade(kubeconfig)
    (rendered,) = [o for o in objs if o["kind"] == "Secret"]
    assert rendered["data"]["tls.crt"] != "Zm9v"
    assert check_ca(objs, WIRING) == "caBundle"



def _secret(bundle, previous: bytes | None = None) -> dict:
    data = {"ca.crt": b64(bundle.ca_cert_pem), "tls.crt": b64(bundle.cert_pem), "tls.key": b64(bundle.key_pem)}
    if previous is not None:
        data["ca-previous.crt"] = b64(previous)
    return {"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
            "metadata": {"name": SECRET, "namespace": NAMESPACE}, "data": data}


def _bundles(objs: list[dict]) -> set[bytes]:
    return {base64.b64decode(h["clientConfig"]["caBundle"]) for o in objs if o["kind"].endswith("WebhookConfiguration")
            for h in o["webhooks"]}


def test_rotate_ca_keeps_the_old_ca_in_the_bundle_until_it_is_turned_off():
    old = generate([f"{WIRING.service}.{NAMESPACE}.svc"])
    path = f"/api/v1/namespaces/{NAMESPACE}/secrets/{SECRET}"
    # 1. rotateCA: a new CA and serving certificate; caBundle = old CA + new CA
    with fake_api({path: _secret(old)}) as (kubeconfig, _):
        objs = render_upgrade(kubeconfig, {"tls": {"helm": {"rotateCA": True}}})
    (secret,) = [o for o in objs if o["kind"] == "Secret"]
    new_ca = base64.b64decode(secret["data"]["ca.crt"])
    assert new_ca != old.ca_cert_pem and base64.b64decode(secret["data"]["ca-previous.crt"]) == old.ca_cert_pem
    assert _bundles(objs) == {old.ca_cert_pem + new_ca}
    serving = x509.load_pem_x509_certificate(base64.b64decode(secret["data"]["tls.crt"]))
    serving.verify_directly_issued_by(x509.load_pem_x509_certificate(new_ca))  # the bundle's second CA signed it
    # an upgrade while rotateCA is still on keeps the overlap (no second rotation)
    with fake_api({path: secret}) as (kubeconfig, _):
        again = render_upgrade(kubeconfig, {"tls": {"helm": {"rotateCA": True}}})
    assert [o for o in again if o["kind"] == "Secret"][0]["data"] == secret["data"]
    assert _bundles(again) == {old.ca_cert_pem + new_ca}
    # 2. rotateCA off: the old CA leaves the bundle and the Secret
    with fake_api({path: secret}) as (kubeconfig, _):
        done = render_upgrade(kubeconfig)
    (final,) = [o for o in done if o["kind"] == "Secret"]
    assert "ca-previous.crt" not in final["data"] and final["data"]["tls.crt"] == secret["data"]["tls.crt"]
    assert _bundles(done) == {new_ca}
