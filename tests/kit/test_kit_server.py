"""tests.kit.server: `serve` is up over TLS on loopback when it is yielded, logs to a file, and is gone after."""
from __future__ import annotations

import httpx
import pytest

from tests.kit.builders import review, vm
from tests.kit.server import launch, serve


def test_serve_is_ready_answers_reviews_and_stops(tmp_path):
    with serve(tmp_path, ready_path="/readyz") as server, server.client() as client:
        assert server.url.startswith("https://127.0.0.1:")
        assert client.get("/readyz").status_code == 200
        answer = client.post("/mutate", json=review(vm(instancetype="u1.medium"), uid="kit")).json()
        assert answer["response"]["uid"] == "kit"
        assert httpx.get(server.metrics_url + "/metrics", timeout=5).status_code == 200
        proc = server.proc
    assert proc.poll() is not None
    assert server.logs()  # uvicorn's start-up lines went to the log


def test_launch_fails_with_the_log_when_the_process_exits(tmp_path):
    with pytest.raises(RuntimeError, match="exited with 2"), launch(tmp_path, ["serve", "--no-such-flag"],
                                                                      lambda: False):
        pass
