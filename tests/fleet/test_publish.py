"""`audit --report` on the strict fake API server serving the real report CRDs (schemas validated and
pruned as kube-apiserver does): what is written, a second run after VMs change, a split namespace,
the API not installed, 403 on write, and other producers' reports left alone."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml

from instancetype_webhook.fleet.policyreport import MANAGED_BY, PART
from tests.fakeapi.apiserver import FakeAPIServer
from tests.kit.cli import Result, run_main
from tests.kit.fleet_cluster import catalog_fake, vm
from tests.kit.shared_data import SHARED

CRDS = SHARED / "policyreport-crds"
KIND = {"policyreport": "PolicyReport", "openreports": "Report"}


def install_report_crds(fake: FakeAPIServer) -> None:
    for path in sorted(CRDS.glob("*.yaml")):
        fake.install_crd(yaml.safe_load(path.read_text()))


def conflicting(name: str, ns: str) -> dict[str, Any]:
    body = vm(name, ns)
    body["spec"]["template"]["spec"]["domain"]["cpu"] = {"cores": 3}  # u1.small owns the CPU: refused
    return body


def populate(fake: FakeAPIServer) -> None:
    for i in range(4):
        fake.add(vm(f"web-{i}", "team-a"))
    fake.add(vm("legacy", "team-a", "retired", None))  # unresolved
    fake.add(conflicting("db", "team-b"))
    fake.add(vm("plain", "team-b", None, None))  # no reference: pass
    fake.add(vm("only", "team-c"))


@pytest.fixture
def cluster(tmp_path: Path):
    fake = catalog_fake()
    install_report_crds(fake)
    populate(fake)
    config = fake.kubeconfig_file(tmp_path)
    try:
        yield fake, config
    finally:
        fake.stop()


def audit(config: str, *args: str) -> Result:
    return run_main("audit", "--kubeconfig", config, "--progress", "never", *args)


def ours(fake: FakeAPIServer, kind: str = "PolicyReport") -> dict[tuple[str, str], dict[str, Any]]:
    return {(r["metadata"]["namespace"], r["metadata"]["name"]): r for r in fake.all(kind)
            if (r["metadata"].get("labels") or {}).get(MANAGED_BY) == "instancetype-webhook"}


def results(report: dict[str, Any]) -> dict[str, str]:
    return {r["resources"][0]["name"]: r["result"] for r in report["results"]}


@pytest.mark.parametrize("api", ["policyreport", "openreports"])
def test_one_report_per_namespace_accepted_by_the_real_schema(cluster, api):
    fake, config = cluster
    code, _, err = audit(config, "-A", "--report", api)
    assert code == 1  # a VM refused, one unresolved: the audit's own exit status
    stored = ours(fake, KIND[api])
    assert set(stored) == {("team-a", "instancetype-webhook"), ("team-b", "instancetype-webhook"),
                           ("team-c", "instancetype-webhook")}
    a, b = stored[("team-a", "instancetype-webhook")], stored[("team-b", "instancetype-webhook")]
    assert results(a) == {"web-0": "warn", "web-1": "warn", "web-2": "warn", "web-3": "warn", "legacy": "fail"}
    assert results(b) == {"db": "fail", "plain": "pass"}
    assert a["summary"] == {"pass": 0, "fail": 1, "warn": 4, "error": 0, "skip": 0}
    vm_uid = fake.get("VirtualMachine", "db", "team-b")["metadata"]["uid"]
    db = next(r for r in b["results"] if r["resources"][0]["name"] == "db")
    assert db["resources"][0] == {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "namespace": "team-b",
                                  "name": "db", "uid": vm_uid}
    assert "spec.template.spec.domain.cpu.cores" in db["properties"]["causes"]
    # the server pruned nothing: every field written is declared by the CRD
    sent = [r for r in b["results"] if r["resources"][0]["name"] == "plain"][0]
    assert set(sent) == {"source", "policy", "rule", "category", "result", "severity", "scored", "message",
                         "properties", "resources", "timestamp"}
    assert err.splitlines()[1].split() == ["NAMESPACE", "NAME", "PASS", "FAIL", "WARN", "ERROR", "SKIP", "CHANGE"]
    assert err.splitlines()[2].split() == ["team-a", "instancetype-webhook", "0", "1", "4", "0", "0", "created"]


def test_a_second_run_leaves_exactly_the_current_state(cluster):
    fake, config = cluster
    kyverno = {"apiVersion": "wgpolicyk8s.io/v1alpha2", "kind": "PolicyReport",
               "metadata": {"name": "cpol-require-labels", "namespace": "team-c",
                            "labels": {MANAGED_BY: "kyverno"}},
               "summary": {"pass": 1}, "results": [{"policy": "require-labels", "result": "pass"}]}
    fake.add(kyverno)
    assert audit(config, "-A", "--report", "policyreport")[0] == 1
    first = ours(fake)
    fake.delete(vm("web-0", "team-a"))
    fake.delete(vm("legacy", "team-a"))  # the unresolved one is gone
    fake.add(vm("db", "team-b"))  # fixed: no longer refused
    fake.delete(vm("only", "team-c"))  # team-c has no VM left
    fake.add(vm("new", "team-d"))
    code, _, err = audit(config, "-A", "--report", "policyreport")
    assert code == 0
    now = ours(fake)
    assert set(now) == {("team-a", "instancetype-webhook"), ("team-b", "instancetype-webhook"),
                        ("team-d", "instancetype-webhook")}
    assert results(now[("team-a", "instancetype-webhook")]) == {"web-1": "warn", "web-2": "warn", "web-3": "warn"}
    assert results(now[("team-b", "instancetype-webhook")]) == {"db": "warn", "plain": "pass"}
    assert now[("team-a", "instancetype-webhook")]["metadata"]["uid"] == \
        first[("team-a", "instancetype-webhook")]["metadata"]["uid"]  # replaced in place, not recreated
    assert err.splitlines()[-1].split() == ["team-c", "instancetype-webhook", "deleted"]
    other = fake.get("PolicyReport", "cpol-require-labels", "team-c")
    assert other["results"] == kyverno["results"] and other["metadata"]["resourceVersion"]  # untouched


def test_one_namespace_replaces_only_its_own_report(cluster):
    fake, config = cluster
    audit(config, "-A", "--report", "policyreport")
    before = ours(fake)
    fake.delete(vm("only", "team-c"))
    audit(config, "-n", "team-a", "--report", "policyreport")
    after = ours(fake)
    assert set(after) == set(before)  # team-c's report stays: that namespace was not audited
    assert after[("team-b", "instancetype-webhook")] == before[("team-b", "instancetype-webhook")]


def test_a_large_namespace_is_split_and_shrinks_back(cluster):
    fake, config = cluster
    for i in range(200):
        fake.add(vm(f"bulk-{i:03d}", "bulk"))
    code, _, err = audit(config, "-n", "bulk", "--report", "policyreport", "--report-max-bytes", "65536")
    assert code == 0
    parts = sorted(ours(fake).values(), key=lambda r: r["metadata"]["annotations"][PART])
    assert len(parts) >= 3 and all(len(orjson.dumps(p)) <= 65536 for p in parts)
    count = len(parts)
    assert [p["metadata"]["annotations"][PART] for p in parts] == [f"{i}/{count}" for i in range(1, count + 1)]
    names = [r["resources"][0]["name"] for p in parts for r in p["results"]]
    assert sorted(names) == [f"bulk-{i:03d}" for i in range(200)] and len(set(names)) == 200
    for i in range(190):
        fake.delete(vm(f"bulk-{i:03d}", "bulk"))
    audit(config, "-n", "bulk", "--report", "policyreport", "--report-max-bytes", "65536")
    [left] = ours(fake).values()
    assert left["metadata"]["name"] == "instancetype-webhook" and len(left["results"]) == 10
    assert left["metadata"]["annotations"][PART] == "1/1"


def test_an_unsplit_report_would_be_refused_by_the_server(cluster):
    """The limit the split avoids is real: the same results as one object are not stored."""
    fake, config = cluster
    for i in range(200):
        fake.add(vm(f"bulk-{i:03d}", "bulk"))
    audit(config, "-n", "bulk", "--report", "policyreport", "--report-max-bytes", "65536")
    parts = list(ours(fake).values())
    whole = {**parts[0], "metadata": {"name": "whole", "namespace": "bulk"},
             "results": [r for p in parts for r in p["results"]] * 12}
    assert len(orjson.dumps(whole)) > 1536 * 1024
    import httpx

    resp = httpx.post(f"{fake.url}/apis/wgpolicyk8s.io/v1alpha2/namespaces/bulk/policyreports",
                      content=orjson.dumps(whole), headers={"Content-Type": "application/json"})
    assert resp.status_code == 500 and resp.json()["message"] == "etcdserver: request is too large"


def test_the_api_not_installed_is_exit_2_at_once_and_nothing_written(tmp_path: Path):
    fake = catalog_fake()  # no report CRDs
    populate(fake)
    config = tmp_path / "kubeconfig"
    config.write_text(fake.kubeconfig())
    try:
        code, out, err = audit(str(config), "-A", "--report", "openreports")
        assert code == 2 and out == ""
        assert "the Report API openreports.io/v1alpha1 is not installed on this cluster" in err
        assert "nothing was written" in err
        assert fake.count("GET /apis/kubevirt.io/v1/virtualmachines") == 0  # no VM listed: the check comes first
        assert sum(fake.count(v) for v in ("POST ", "PUT ", "PATCH ", "DELETE ")) == 0
    finally:
        fake.stop()


@pytest.mark.parametrize("verb", ["create", "list"])
def test_forbidden_is_a_clear_exit_2(cluster, verb):
    fake, config = cluster
    fake.forbid(verb, "policyreports")
    code, out, err = audit(config, "-A", "--report", "policyreport")
    assert code == 2 and "NAMESPACE" in out  # the audit itself is still printed
    assert f"not allowed to {verb} policyreports.wgpolicyk8s.io (HTTP 403)" in err
    assert f'cannot {verb} resource "policyreports" in API group "wgpolicyk8s.io"' in err
    assert ours(fake) == {}


def test_a_same_named_report_of_another_producer_is_left_alone(cluster):
    fake, config = cluster
    theirs = {"apiVersion": "wgpolicyk8s.io/v1alpha2", "kind": "PolicyReport",
              "metadata": {"name": "instancetype-webhook", "namespace": "team-a"}, "results": []}
    fake.add(theirs)
    code, _, err = audit(config, "-A", "--report", "policyreport")
    assert code == 2 and "PolicyReport team-a/instancetype-webhook exists and was not written by" in err
    assert fake.get("PolicyReport", "instancetype-webhook", "team-a")["results"] == []


def test_report_with_shard_is_refused(cluster):
    _, config = cluster
    code, _, err = audit(config, "-A", "--report", "policyreport", "--shard", "0/2")
    assert code == 2 and "cannot be combined with --shard" in err


def test_exit_zero_for_a_scheduled_audit(cluster):
    _, config = cluster
    assert audit(config, "-A", "--report", "policyreport", "--exit-zero")[0] == 0
