"""instancetype_webhook/playground/routes.py on the real `serve --dev` process: the page, its assets, its API, its
limits."""
from __future__ import annotations

import re
from pathlib import Path

import orjson
import pytest

from instancetype_webhook.playground.routes import CSP, STATIC
from tests.kit.playground_live import playground
from tests.kit.server import serve

STATIC_DIR = Path(__file__).resolve().parents[2] / "instancetype_webhook" / "playground" / "static"


@pytest.mark.parametrize("path", ["/playground", "/playground/static/playground.js",
                                  "/playground/static/playground.css", "/playground/api/samples",
                                  "/playground/api/catalog", "/playground/static/nothing.js"])
def test_every_answer_has_the_strict_content_security_policy(dev_server, path):
    with dev_server.client() as client:
        resp = client.get(path)
    assert resp.status_code == (404 if "nothing" in path else 200)
    assert resp.headers["content-security-policy"] == CSP
    assert "'unsafe-inline'" not in CSP and "'unsafe-eval'" not in CSP and "default-src 'none'" in CSP
    assert resp.headers["x-content-type-options"] == "nosniff"


def test_the_page_loads_only_its_own_assets_and_they_are_small():
    index = (STATIC_DIR / "index.html").read_text()
    assert re.findall(r'(?:src|href)="([^"]+)"', index) == [
        "/playground/static/favicon.svg", "/playground/static/playground.css", "/playground/static/playground.js"]
    for name in ["index.html", *STATIC]:
        text = (STATIC_DIR / name).read_text()
        urls = [u for u in re.findall(r"https?://[^\s\"')]+", text) if u != "http://www.w3.org/2000/svg"]
        assert urls == [], f"{name} names an outside address"
        assert "@import" not in text and "url(" not in text
        assert "innerHTML" not in text and "insertAdjacentHTML" not in text and "document.write" not in text
    weight = sum((STATIC_DIR / name).stat().st_size for name in ["index.html", *STATIC])
    assert weight < 48 * 1024, f"the page's assets weigh {weight} bytes"


def test_samples_and_catalogue(dev_server):
    with dev_server.client() as client:
        samples = client.get("/playground/api/samples").json()
        catalog = client.get("/playground/api/catalog").json()
    assert [s["name"] for s in samples][:3] == ["expand", "reference", "conflict"]
    assert "kind: VirtualMachine" in samples[0]["text"]
    assert {"u1.medium", "u1.2xlarge", "cx1.large"} <= set(catalog["instancetypes"])
    assert {"fedora", "rhel.9", "windows.11"} <= set(catalog["preferences"])
    assert catalog["source"].startswith("bundled catalogue common-instancetypes ") and catalog["policy"] == "reference"
    assert catalog["vmPolicyOverrides"] is True


def test_run_answers_what_the_webhook_would_do(dev_server):
    with dev_server.client() as client:
        samples = {s["name"]: s["text"] for s in client.get("/playground/api/samples").json()}
        out = client.post("/playground/api/run", json={"text": samples["expand"]}).json()
        refused = client.post("/playground/api/run", json={"text": samples["conflict"]}).json()
    assert out["allowed"] is True and "instancetype:" not in out["storedYAML"]
    assert refused["allowed"] is False and [c["line"] for c in refused["causes"]] == [19, 21]


@pytest.mark.parametrize(("body", "status", "error"), [
    (b"not json", 400, "body is not valid JSON"),
    (b'["a list"]', 400, "editor's text in `text`"),
    (b'{"text": 5}', 400, "editor's text in `text`"),
    (b'{"text": "kind: VirtualMachine", "policy": "all of them"}', 400, "policy must be one of"),
    (b'{"text": "a: [1"}', 200, "expected ',' or ']'"),
])
def test_bad_bodies_get_a_reason(dev_server, body, status, error):
    with dev_server.client() as client:
        resp = client.post("/playground/api/run", content=body)
    assert resp.status_code == status and resp.json()["ok"] is False and error in resp.json()["error"]


def test_bodies_are_capped_as_for_preview(tmp_path):
    with playground(tmp_path, env={"INSTANCETYPE_WEBHOOK_MAX_BODY_BYTES": "4096"}) as live, live.client() as client:
        big = client.post("/playground/api/run", content=orjson.dumps({"text": "a: " + "x" * 5000}))
        preview = client.post("/preview", content=orjson.dumps({"spec": {}, "x": "x" * 5000}))
        small = client.post("/playground/api/run", json={"text": "a: 1"})
    assert (big.status_code, preview.status_code, small.status_code) == (413, 413, 200)
    assert big.json()["error"] == "request body larger than 4096 bytes"


def test_no_playground_without_dev(tmp_path):
    with serve(tmp_path) as server, server.client() as client:
        assert client.get("/playground").status_code == 404
        assert client.post("/playground/api/run", json={"text": "a: 1"}).status_code == 404
        assert client.get("/healthz").status_code == 200
