"""Faults, end to end: the real server (`serve --kubeconfig`, uvicorn, TLS) on the fake Kubernetes API
server of tests/sources, which speaks the real list/watch protocol.

- watch connections drop: lookups stay correct (live while the watch reconnects), the watch resumes,
  later changes arrive;
- the API server restarts with a new resourceVersion history: the watch gets 410 Gone and relists;
- the API server is unreachable for a period (RELIABILITY_OUTAGE_SECONDS; 3 s in CI, 60 s in the
  long mode): no review is answered from the cache it can no longer vouch for: every reference lookup
  is refused within the deadline with a clear, retryable reason; /readyz stays true until the cache has
  been out of sync for 60 s; once the API server is back, a change made meanwhile is used within 5 s;
- a live lookup that hangs: answered within --review-deadline, as --deadline-action says;
- SIGTERM: /readyz goes false first, in-flight requests are drained, then the process exits.
"""
from __future__ import annotations

import base64
import json
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import jsonpatch
import orjson
import pytest

from tests.fakeapi.apiserver import GROUP_PATH, FakeAPIServer
from tests.kit.builders import instancetype
from tests.kit.fault_strategies import base_vm, review
from tests.kit.fuzz import LONG
from tests.kit.server import Server, serve
from tests.kit.wait import wait_for

OUTAGE = float(os.environ.get("RELIABILITY_OUTAGE_SECONDS", "60" if LONG else "3"))
LIST_PATH = "GET " + GROUP_PATH + "/virtualmachineclusterinstancetypes"
FAST_LOOKUPS = {"INSTANCETYPE_WEBHOOK_LOOKUP_TIMEOUT": "1", "INSTANCETYPE_WEBHOOK_REVIEW_DEADLINE": "3"}



def vm_for(name: str) -> dict[str, Any]:
    vm = base_vm("vm-" + name)
    vm["spec"]["instancetype"] = {"name": name}
    return vm



def sockets(client: httpx.Client, name: str) -> int | str:
    """The CPU sockets the webhook flattens `name` into, or the denial message."""
    vm = vm_for(name)
    start = time.monotonic()
    resp = client.post("/mutate", content=orjson.dumps(review(vm)))
    assert time.monotonic() - start < 4, "answer took longer than the review deadline"
    assert resp.status_code == 200, resp.text
    answer = resp.json()["response"]
    if not answer["allowed"]:
        return answer["status"]["message"]
    flat = jsonpatch.apply_patch(vm, json.loads(base64.b64decode(answer["patch"])), in_place=False)
    return flat["spec"]["template"]["spec"]["domain"]["cpu"]["sockets"]


def ready(client: httpx.Client) -> bool:
    return client.get("/readyz").status_code == 200


@pytest.fixture
def fake() -> Iterator[FakeAPIServer]:
    api = FakeAPIServer()
    api.add(instancetype("small", 2))
    yield api
    api.stop()


def _serve_on(tmp: Path, api: FakeAPIServer, *args: str, env: dict[str, str] | None = None):
    config = tmp / "kubeconfig"
    config.write_text(api.kubeconfig())
    return serve(tmp, "--kubeconfig", str(config), "--policy", "expand", *args, env={**FAST_LOOKUPS, **(env or {})})


@pytest.fixture
def cluster_server(tmp_path: Path, fake: FakeAPIServer) -> Iterator[tuple[Server, httpx.Client]]:
    with _serve_on(tmp_path, fake) as server, server.client() as client:
        wait_for(lambda: ready(client), 15, "first sync")
        yield server, client


def test_watch_drop_keeps_answering_and_resumes(fake: FakeAPIServer, cluster_server):
    _, client = cluster_server
    assert sockets(client, "small") == 2
    lists = fake.requests.count(LIST_PATH)  # exactly the list (a live GET of the object is longer)
    for _ in range(3):
        fake.drop_watches()
        assert sockets(client, "small") == 2 and ready(client)
    fake.add(instancetype("small", 4))  # arrives through the resumed watch
    wait_for(lambda: sockets(client, "small") == 4, 10, "change after the watch drops")
    assert fake.requests.count(LIST_PATH) == lists, "a dropped watch resumes from its resourceVersion, no relist"


def test_restart_with_new_history_relists(tmp_path: Path, fake: FakeAPIServer, cluster_server):
    _, client = cluster_server
    assert sockets(client, "small") == 2
    port = fake.port
    fake.stop()
    wait_for(lambda: "lookup failed" in str(sockets(client, "small")), 5, "the break seen")  # refused, not stale
    assert ready(client)
    restarted = FakeAPIServer(port=port, start_rv=50_000)  # a new resourceVersion history (e.g. a restore)
    try:
        restarted.add(instancetype("small", 6))
        restarted.add(instancetype("large", 8))
        restarted.compact()  # the old watch position is unknown to the new history: 410 Gone
        wait_for(lambda: restarted.count(LIST_PATH) >= 1, 15, "relist after 410 Gone")
        wait_for(lambda: sockets(client, "small") == 6, 10, "relisted object")
        assert sockets(client, "large") == 8 and ready(client)
    finally:
        restarted.stop()


def test_unreachable_period_cache_answers_then_resyncs(fake: FakeAPIServer, cluster_server):
    server, client = cluster_server
    assert sockets(client, "small") == 2
    fake.stop()
    wait_for(lambda: "lookup failed" in str(sockets(client, "small")), 5, "the break seen by the watch")
    end = time.monotonic() + OUTAGE
    misses = answered = 0
    while time.monotonic() < end:
        message = sockets(client, "small")  # the cache cannot vouch for it: a clear, retryable denial
        assert isinstance(message, str) and "lookup failed" in message, message
        if time.monotonic() < end - OUTAGE + 55:  # stale_after is 60 s
            assert ready(client), "/readyz: the cache is out of sync for less than 60 s"
        if misses < 3:  # a cache miss cannot be looked up: a clear denial within the deadline
            message = sockets(client, "unknown-" + str(misses))
            assert isinstance(message, str) and "lookup failed" in message, message
            misses += 1
        answered += 1
        time.sleep(0.2)
    fake.add(instancetype("small", 3), notify=False)  # changed while nobody watched
    fake.start()
    back = time.monotonic()
    wait_for(lambda: sockets(client, "small") == 3, 5, "the change made during the outage")
    wait_for(lambda: ready(client), 15, "ready after the outage")
    print(f"\noutage {OUTAGE:g}s: {answered} rounds refused with a reason; the new spec used "
          f"{time.monotonic() - back:.1f}s after the API server came back")
    assert answered >= OUTAGE / 2 and server.proc.poll() is None


@pytest.mark.parametrize("action", ["deny", "allow"])
def test_hanging_lookup_answered_within_the_deadline(tmp_path: Path, fake: FakeAPIServer, action: str):
    """The live GET hangs longer than the review deadline: the answer comes at the deadline."""
    env = {"INSTANCETYPE_WEBHOOK_LOOKUP_TIMEOUT": "20", "INSTANCETYPE_WEBHOOK_REVIEW_DEADLINE": "1"}
    with _serve_on(tmp_path, fake, "--deadline-action", action, env=env) as server, server.client() as client:
        wait_for(lambda: ready(client), 15, "first sync")
        fake.hang_gets = 5
        start = time.monotonic()
        resp = client.post("/mutate", content=orjson.dumps(review(vm_for("not-cached"))))
        took = time.monotonic() - start
        fake.hang_gets = 0
        answer = resp.json()["response"]
        assert resp.status_code == 200 and 0.9 < took < 4, took  # deadline 1 s; the GET hangs 5 s
        assert answer["allowed"] is (action == "allow")
        text = (answer.get("warnings") or [""])[0] if action == "allow" else answer["status"]["message"]
        assert "deadline" in text and len(text) <= 120, answer
        assert sockets(client, "small") == 2, "the worker is free for the next review"


def test_failed_lookup_follows_the_deadline_action(tmp_path: Path, fake: FakeAPIServer):
    """A live GET that times out (lookup timeout below the deadline) is answered the same way."""
    with _serve_on(tmp_path, fake, "--deadline-action", "allow") as server, server.client() as client:
        wait_for(lambda: ready(client), 15, "first sync")
        fake.hang_gets = 3
        answer = client.post("/mutate", content=orjson.dumps(review(vm_for("not-cached")))).json()["response"]
        fake.hang_gets = 0
        assert answer["allowed"] and "patch" not in answer
        assert any("lookup failed" in w for w in answer["warnings"]), answer


def test_sigterm_drains_in_flight_requests_after_readyz_goes_false(tmp_path: Path, fake: FakeAPIServer):
    env = {"INSTANCETYPE_WEBHOOK_LOOKUP_TIMEOUT": "6", "INSTANCETYPE_WEBHOOK_REVIEW_DEADLINE": "8"}
    with _serve_on(tmp_path, fake, "--shutdown-delay", "1.5", env=env) as server, server.client() as client:
        wait_for(lambda: ready(client), 15, "first sync")
        fake.add(instancetype("slow", 5), notify=False)  # only a (slow) live GET finds it
        fake.hang_gets = 2.5
        result: dict[str, Any] = {}

        def in_flight() -> None:
            with server.client() as own:
                result["sockets"] = sockets(own, "slow")

        worker = threading.Thread(target=in_flight)
        worker.start()
        time.sleep(0.5)  # the review is now waiting on the live GET
        server.proc.send_signal(signal.SIGTERM)
        time.sleep(0.2)
        with server.client() as fresh:
            resp = fresh.get("/readyz")
        assert resp.status_code == 503 and resp.json()["reason"] == "draining", resp.text
        worker.join(15)
        assert result.get("sockets") == 5, result  # the in-flight review was answered in full
        # uvicorn re-raises the captured SIGTERM once it has shut down cleanly
        assert server.proc.wait(15) in (0, -signal.SIGTERM)
        assert "Traceback" not in server.logs()


def test_default_deadline_is_below_every_shipped_timeout():
    """The review deadline must fire before the API server gives up on the webhook (timeoutSeconds)."""
    import yaml

    from instancetype_webhook.settings import ServerSettings
    from tests.kit.server import ROOT

    timeouts = []
    for path in sorted((ROOT / "webhook_config").glob("*webhookconfiguration.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            timeouts += [w["timeoutSeconds"] for w in (doc or {}).get("webhooks") or []]
    values = yaml.safe_load((ROOT / "charts" / "instancetype-webhook" / "values.yaml").read_text())
    timeouts.append(values["webhook"]["timeoutSeconds"])
    assert len(timeouts) >= 3, timeouts
    assert ServerSettings().review_deadline < min(timeouts)
