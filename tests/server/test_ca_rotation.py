"""Replacing the CA with `certs --rotate-from`, against the real server (uvicorn + TLS on loopback) whose
certificate files are mounted the way the kubelet mounts a Secret (`tls.crt -> ..data/tls.crt`, `..data` a
symlink swapped atomically), while a client that trusts the current caBundle, as the API server does,
keeps opening connections and sending reviews: not one fails across the three steps."""
from __future__ import annotations

import base64
import os
import shutil
import ssl
import threading
import time
from pathlib import Path

import httpx
import orjson
import pytest
from prometheus_client.parser import text_string_to_metric_families

from instancetype_webhook.certs import key_id
from tests.kit.builders import review
from tests.kit.cli import Result, run_cli
from tests.kit.server import Certs, serve
from tests.kit.wait import wait_for

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"}}
HOSTS = ("--service", "webhook", "--namespace", "ns", "--san", "127.0.0.1")


def certs_command(*args: str) -> Result:
    # `certs` for this test's Service names (HOSTS)
    return run_cli("certs", *HOSTS, *args, timeout=60)


class SecretVolume:
    """A Secret volume as the kubelet writes it: timestamped directories, `..data` pointing at the current
    one, and the files as symlinks through `..data`."""

    def __init__(self, root: Path):
        self.root, self.version = root, 0
        root.mkdir()

    def publish(self, source: Path) -> None:
        self.version += 1
        payload = self.root / f"..2026_12_05_00_00_{self.version:02d}"
        payload.mkdir()
        for name in ("ca.crt", "tls.crt", "tls.key"):
            shutil.copy(source / name, payload / name)
        tmp = self.root / "..data_tmp"
        tmp.symlink_to(payload.name)
        os.replace(tmp, self.root / "..data")  # the atomic swap
        for name in ("ca.crt", "tls.crt", "tls.key"):
            if not (self.root / name).is_symlink():
                (self.root / name).symlink_to(f"..data/{name}")


class APIServerLike:
    """Sends reviews on fresh connections, each verified against the caBundle file as it is at that moment."""

    def __init__(self, url: str, bundle: Path):
        self.url, self.bundle = url, bundle
        self.sent, self.failures = 0, []
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run)

    def _run(self) -> None:
        while not self._done.is_set():
            ctx = ssl.create_default_context(cadata=self.bundle.read_text())
            try:
                r = httpx.post(self.url + "/validate", verify=ctx, timeout=10,
                               content=orjson.dumps(review(POD, group="", kind="Pod")))
                if r.status_code != 200:
                    self.failures.append(f"HTTP {r.status_code}")
            except httpx.HTTPError as exc:
                self.failures.append(repr(exc))
            self.sent += 1
            time.sleep(0.02)

    def __enter__(self) -> APIServerLike:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join(15)


def served_issuer_key(metrics_url: str) -> str:
    text = httpx.get(metrics_url + "/metrics", timeout=5).text
    for family in text_string_to_metric_families(text):
        if family.name == "instancetype_webhook_tls_certificate_info":
            return family.samples[0].labels["issuer_key_id"]
    raise AssertionError("no instancetype_webhook_tls_certificate_info")


def set_bundle(bundle: Path, pem: str) -> None:
    tmp = bundle.with_suffix(".tmp")
    tmp.write_text(pem)
    os.replace(tmp, bundle)



def test_the_three_step_ca_rotation_fails_no_request(tmp_path: Path):
    assert certs_command("--out", str(tmp_path / "old")).code == 0
    volume = SecretVolume(tmp_path / "secret")
    volume.publish(tmp_path / "old")
    bundle = tmp_path / "caBundle.pem"
    set_bundle(bundle, (tmp_path / "old" / "ca.crt").read_text())
    mounted = Certs(bundle, volume.root / "tls.crt", volume.root / "tls.key")
    env = {"INSTANCETYPE_WEBHOOK_TLS_RELOAD_INTERVAL": "0.2", "INSTANCETYPE_WEBHOOK_METRICS_HOST": "127.0.0.1"}
    with serve(tmp_path, certs=mounted, env=env) as server, APIServerLike(server.url, bundle) as apiserver:
        assert served_issuer_key(server.metrics_url) == key_id((tmp_path / "old" / "ca.crt").read_bytes())
        rotated = certs_command("--out", str(tmp_path / "new"), "--rotate-from", str(tmp_path / "old" / "ca.crt"))
        assert rotated.code == 0, rotated.err
        new_ca = (tmp_path / "new" / "ca.crt").read_bytes()
        # the naive way, the new CA alone while the pods serve the old leaf, would fail every call:
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            httpx.get(server.url + "/healthz", verify=ssl.create_default_context(cadata=new_ca.decode()))
        # 1. the bundle carries the old and the new CA
        overlap = (tmp_path / "new" / "ca-bundle.crt").read_text()
        assert rotated.out.strip() == base64.b64encode(overlap.encode()).decode()
        set_bundle(bundle, overlap)
        time.sleep(1)
        # 2. the Secret gets the new leaf; wait until the server serves it
        volume.publish(tmp_path / "new")
        wait_for(lambda: served_issuer_key(server.metrics_url) == key_id(new_ca), 15)
        time.sleep(1)
        # 3. the old CA leaves the bundle
        set_bundle(bundle, new_ca.decode())
        sent = apiserver.sent
        wait_for(lambda: apiserver.sent > sent + 20, 15)
    assert apiserver.failures == [], apiserver.failures[:5]
    assert apiserver.sent > 50
    assert f'issuer_key_id="{key_id(new_ca)}"' in rotated.err  # what step 2 tells to wait for


def test_rotate_from_refuses_what_is_not_a_ca(tmp_path: Path):
    assert certs_command("--out", str(tmp_path / "old")).code == 0
    done = certs_command("--out", str(tmp_path / "new"), "--rotate-from", str(tmp_path / "old" / "tls.crt"))
    assert done.code == 2 and "is not a CA certificate" in done.err and "Traceback" not in done.err
    done = certs_command("--out", str(tmp_path / "new2"), "--rotate-from", str(tmp_path / "missing.crt"))
    assert done.code == 2 and "cannot read it" in done.err
    (tmp_path / "junk.crt").write_text("not a certificate\n")
    done = certs_command("--out", str(tmp_path / "new3"), "--rotate-from", str(tmp_path / "junk.crt"))
    assert done.code == 2 and "no PEM certificate" in done.err
