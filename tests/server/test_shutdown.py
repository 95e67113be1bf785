"""SIGTERM: /readyz turns false first, reviews are still answered while draining, then a clean exit."""
from __future__ import annotations

import signal
import time
from pathlib import Path

import orjson

from tests.kit.builders import review
from tests.kit.server import serve

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"}}


def test_sigterm_drains(tmp_path: Path):
    with serve(tmp_path, "--shutdown-delay", "1.5") as server, server.client() as client:
        assert client.get("/readyz").status_code == 200
        server.proc.send_signal(signal.SIGTERM)
        time.sleep(0.2)
        ready = client.get("/readyz")
        assert ready.status_code == 503 and ready.json()["reason"] == "draining"
        resp = client.post("/validate", content=orjson.dumps(review(POD, group="", kind="Pod")))
        assert resp.status_code == 200 and resp.json()["response"]["allowed"]
        started = time.monotonic()
        # uvicorn re-raises the signal once drained: exit status 0 or "terminated by SIGTERM".
        assert server.proc.wait(10) in (0, -signal.SIGTERM)
        assert time.monotonic() - started < 5  # the idle keep-alive connection did not hold it up
        assert "Traceback" not in server.logs()
