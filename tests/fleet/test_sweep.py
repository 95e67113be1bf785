"""Audit, then sweep, 1,000 VMs on the strict fake API server with the real webhook as its admission
webhook (every write, dry-run ones too, goes through /mutate and /validate over HTTPS)."""
from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from instancetype_webhook.fleet.sweep import Sweeper, SweepOptions
from tests.fakeapi.apiserver import FakeAPIServer
from tests.kit.cli import run_main
from tests.kit.fleet_cluster import (
    VMS,
    catalog_fake,
    comparable,
    create_all,
    mixed_vm,
    mutate_result,
    vm,
    webhook,
)

COUNT, NAMESPACES, THROUGH_WEBHOOK, RETIRED, CAPTURED, EDITED = 1000, 10, 200, 10, 15, 20


def run_cli(*argv: str) -> tuple[int, dict[str, Any]]:
    # specific: these commands print one JSON document, returned parsed
    result = run_main(*argv)
    return result.code, json.loads(result.out)


def retired_instancetype() -> dict[str, Any]:
    return {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineClusterInstancetype",
            "metadata": {"name": "retired"}, "spec": {"cpu": {"guest": 2}, "memory": {"guest": "2Gi"}}}


def populate(tmp: Path, fake: FakeAPIServer) -> None:
    """1,000 VMs stored under `reference`: 200 created through the webhook (those it denies were stored
    before it was installed, like the other 800), 10 whose instance type is deleted afterwards, 15 whose
    status holds a controllerRevisionRef (written through /status as KubeVirt's controller does)."""
    vms = [mixed_vm(i, NAMESPACES) for i in range(COUNT - RETIRED)]
    fake.add(retired_instancetype())
    vms += [vm(f"old-{i}", f"ns-{i:02d}", "retired", None) for i in range(RETIRED)]
    with webhook(tmp, fake, "reference"):
        denied = create_all(fake, vms[:THROUGH_WEBHOOK] + vms[-RETIRED:])
    for body in denied + vms[THROUGH_WEBHOOK:-RETIRED]:
        fake.add(body)
    fake.delete(retired_instancetype())
    small = fake.get("VirtualMachineClusterInstancetype", "u1.small")
    with httpx.Client(base_url=fake.url) as http:
        for i in range(0, 6 * CAPTURED, 6):  # VMs referencing u1.small
            name, ns = f"vm-{i:05d}", f"ns-{i % NAMESPACES:02d}"
            fake.add({"apiVersion": "apps/v1", "kind": "ControllerRevision", "revision": 1, "data": small,
                      "metadata": {"name": f"{name}-rev", "namespace": ns}})
            ref = {"name": "u1.small", "controllerRevisionRef": {"name": f"{name}-rev"}}
            resp = http.patch(VMS.format(ns=ns) + f"/{name}/status", json={"status": {"instancetypeRef": ref}},
                              headers={"Content-Type": "application/merge-patch+json"})
            assert resp.status_code == 200, resp.text


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("fleet")
    fake = catalog_fake()
    try:
        populate(tmp, fake)
        config = tmp / "kubeconfig"
        config.write_text(fake.kubeconfig())
        yield tmp, fake, str(config)
    finally:
        fake.stop()


def test_audit_counts_then_the_sweep_does_exactly_that(cluster):
    tmp, fake, config = cluster
    before = {(o["metadata"]["namespace"], o["metadata"]["name"]): o for o in fake.all("VirtualMachine")}
    assert len(before) == COUNT
    writes = sum(fake.count(verb) for verb in ("PUT ", "PATCH ", "POST ", "DELETE "))
    code, audit = run_cli("audit", "--kubeconfig", config, "-A", "-o", "json", "--page-size", "100")
    summary = audit["summary"]
    assert sum(summary.values()) == COUNT and code == 1  # some VMs cannot be flattened
    assert summary["unresolved"] == RETIRED and summary["unchanged"] == (COUNT - RETIRED) // 10
    assert summary["refuse"] > 0 and summary["skip"] == 0 and summary["flatten"] > 500
    assert sum(fake.count(verb) for verb in ("PUT ", "PATCH ", "POST ", "DELETE ")) == writes  # read-only
    by_action = {(v["namespace"], v["name"]): v["action"] for v in audit["vms"]}
    # `expand` leaves the VMs whose status holds a controllerRevisionRef; expandAll flattens them
    _, expand_audit = run_cli("audit", "--kubeconfig", config, "-A", "-o", "json", "--policy", "expand")
    assert expand_audit["summary"]["skip"] == CAPTURED
    assert all("references revision" in v["reason"] for v in expand_audit["vms"] if v["action"] == "skip")

    with webhook(tmp, fake, "expandAll") as server, server.client() as client:
        # server-side dry run: every write admitted by the webhook, nothing stored
        rv, reviews, stored = fake.rv, fake.reviews, fake.writes
        code, dry = run_cli("sweep", "--kubeconfig", config, "-n", "ns-03", "-o", "json", "--dry-run")
        assert fake.rv == rv and fake.writes == stored and dry["writes"] == 0
        flatten_ns = sum(1 for v in audit["vms"] if v["namespace"] == "ns-03" and v["action"] == "flatten")
        assert fake.reviews - reviews == 2 * flatten_ns > 0  # /mutate and /validate for each
        assert dry["summary"]["flattened"] == flatten_ns

        # the sweep, with 20 VMs edited by their owners between the sweep's read and its write
        edited: dict[tuple[str, str], dict[str, Any]] = {}
        lock = threading.Lock()

        def edit_first_writes(verb, res, namespace, name):
            with lock:
                if verb != "PUT" or len(edited) >= EDITED or (namespace, name) in edited:
                    return
                current = fake.get("VirtualMachine", name, namespace)
                current["metadata"]["labels"]["edited"] = "yes"
                current["spec"]["runStrategy"] = "Always"
                edited[(namespace, name)] = comparable(fake.add(current))

        fake.on_write = edit_first_writes
        code, swept = run_cli("sweep", "--kubeconfig", config, "-A", "-o", "json", "--concurrency", "8")
        fake.on_write = None
        counts = swept["summary"]
        assert code == 1 and swept["disagreements"] == 0
        assert (counts["flattened"], counts["refused"], counts["unresolved"], counts["unchanged"],
                counts["skipped"]) == (summary["flatten"], summary["refuse"], summary["unresolved"],
                                       summary["unchanged"], summary["skip"])
        assert counts["conflicts_retried"] >= EDITED and len(edited) == EDITED
        assert {(v["namespace"], v["name"]): v["action"] for v in swept["vms"]} == by_action

        after = {(o["metadata"]["namespace"], o["metadata"]["name"]): o for o in fake.all("VirtualMachine")}
        flattened = []
        for key, old in before.items():
            stored = after[key]
            if by_action[key] in ("refuse", "unresolved", "unchanged"):
                assert stored == old, key  # untouched: same resourceVersion
                continue
            assert "instancetype" not in stored["spec"] and "preference" not in stored["spec"]
            flattened.append(key)
            if key in edited:
                assert stored["metadata"]["labels"]["edited"] == "yes" and stored["spec"]["runStrategy"] == "Always"

        def expected(key: tuple[str, str]) -> dict[str, Any] | None:
            source = edited.get(key, before[key])  # what was stored right before the sweep's write
            return mutate_result(client, {**source, "status": before[key].get("status", {})})

        with ThreadPoolExecutor(8) as pool:
            for key, want in zip(flattened, pool.map(expected, flattened), strict=True):
                assert comparable(after[key]) == comparable(want), key  # what /mutate gives for it

        # idempotent: nothing left to write
        puts = fake.count("PUT ")
        code, again = run_cli("sweep", "--kubeconfig", config, "-A", "-o", "json")
        assert fake.count("PUT ") == puts and again["writes"] == 0 and again["summary"]["flattened"] == 0
        assert again["summary"]["unchanged"] == COUNT - summary["refuse"] - summary["unresolved"]


def test_a_vm_deleted_during_the_sweep_is_not_recreated(cluster):
    tmp, fake, config = cluster
    fake.add(vm("doomed", "ns-00"))
    from instancetype_webhook.fleet.session import open_session

    session = open_session(config, False, policy="expandAll")
    try:
        calls = []

        def delete_then_conflict(verb, res, namespace, name):
            if name == "doomed" and not calls:
                calls.append(verb)
                fake.delete(fake.get("VirtualMachine", "doomed", "ns-00"))

        fake.on_write = delete_then_conflict
        sweeper = Sweeper(session.client, session.ctx, SweepOptions())
        finding = sweeper.sweep_vm(fake.get("VirtualMachine", "doomed", "ns-00"))
    finally:
        fake.on_write = None
        session.close()
    assert finding.action == "unchanged" and finding.reason == "deleted during the sweep"
    assert fake.get("VirtualMachine", "doomed", "ns-00") is None


def test_transient_errors_are_retried_and_forbidden_is_reported(tmp_path: Path):
    from instancetype_webhook.fleet.session import open_session
    from tests.fakeapi.apiserver import APIError

    fake = catalog_fake()
    config = tmp_path / "kubeconfig"
    config.write_text(fake.kubeconfig())
    fake.add(vm("busy", "apps"))
    fake.add(vm("locked", "apps"))
    answers = {"busy": [APIError(429, "TooManyRequests", "too many requests, please try again later"),
                        APIError(503, "ServiceUnavailable", "the server is currently unable to handle the request")],
               "locked": [APIError(403, "Forbidden", 'virtualmachines.kubevirt.io "locked" is forbidden')]}

    def fail_first(verb, res, namespace, name):
        if verb == "PUT" and answers.get(name):
            raise answers[name].pop(0)

    fake.on_write = fail_first
    session = open_session(str(config), False, policy="expandAll")
    try:
        sweeper = Sweeper(session.client, session.ctx, SweepOptions(backoff=0.01))
        busy = sweeper.sweep_vm(fake.get("VirtualMachine", "busy", "apps"))
        locked = sweeper.sweep_vm(fake.get("VirtualMachine", "locked", "apps"))
    finally:
        session.close()
        fake.stop()
    assert busy.action == "flatten" and sweeper.result.errors_retried == 2 and sweeper.result.writes == 1
    assert locked.action == "failed" and "403 Forbidden" in locked.reason
