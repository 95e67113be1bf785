"""instancetype_webhook.fleet.policyreport: the result per audit action, the summary, and splitting a large
namespace."""
from __future__ import annotations

import orjson
import pytest
import yaml

from instancetype_webhook.fleet.finding import Finding
from instancetype_webhook.fleet.policyreport import APIS, MAX_BYTES, PART, reports, result
from tests.fakeapi.schema import crd_versions
from tests.kit.shared_data import SHARED

CRDS = SHARED / "policyreport-crds"


def schema(file: str, version: str):
    return dict(crd_versions(yaml.safe_load((CRDS / file).read_text())))[version]


FINDINGS = [
    Finding("ns", "flat", "unchanged", reason="flat already", uid="u1"),
    Finding("ns", "plain", "unchanged", reason="no instancetype or preference matcher", uid="u2"),
    Finding("ns", "big", "flatten", ops=12, fields=["/spec/instancetype", "/spec/template/spec/domain/cpu"],
            policy="expandAll", uid="u3", running=True, warnings=["running: ..."]),
    Finding("ns", "bad", "refuse", reason="VM field(s) spec.template.spec.domain.cpu.cores conflicts",
            causes=[{"reason": "FieldValueInvalid", "message": "conflicts",
                     "field": "spec.template.spec.domain.cpu.cores"}],
            uid="u4"),
    Finding("ns", "gone", "unresolved", reason='"missing" not found', uid="u5"),
    Finding("ns", "kept", "skip", reason="the VM's policy annotation is reference", uid="u6"),
    Finding("ns", "broken", "failed", reason="SourceUnavailable: timeout", uid="u7"),
]


@pytest.mark.parametrize("flatten, expected", [("warn", "warn"), ("fail", "fail")])
def test_each_action_maps_to_its_result(flatten, expected):
    got = {f.name: result(f.reference(), "expandAll", 1700000000, flatten) for f in FINDINGS}
    assert {n: r["result"] for n, r in got.items()} == {
        "flat": "pass", "plain": "pass", "big": expected, "bad": "fail", "gone": "fail", "kept": "skip",
        "broken": "error"}
    assert got["bad"]["rule"] == "admitted" and got["gone"]["rule"] == "references-resolve"
    assert got["bad"]["properties"]["causes"] == "spec.template.spec.domain.cpu.cores: conflicts"
    assert "spec.template.spec.domain.cpu.cores" in got["bad"]["message"]
    assert got["big"]["properties"] == {"action": "flatten", "policy": "expandAll", "operations": "12",
                                        "fields": "/spec/instancetype, /spec/template/spec/domain/cpu",
                                        "running": "true", "warnings": "running: ..."}
    assert got["big"]["resources"] == [{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
                                        "namespace": "ns", "name": "big", "uid": "u3"}]
    assert got["big"]["policy"] == "instancetype-webhook/expandAll" and got["big"]["source"] == "instancetype-webhook"
    assert got["big"]["timestamp"] == {"seconds": 1700000000, "nanos": 0}


@pytest.mark.parametrize("key, file", [("policyreport", "wgpolicyk8s.io_policyreports.yaml"),
                                       ("openreports", "openreports.io_reports.yaml")])
def test_reports_pass_the_real_crd_schema_unpruned(key, file):
    api = APIS[key]
    [report] = reports(api, [f.reference() for f in FINDINGS], "expandAll", 1700000000)
    pruned, errors = schema(file, api.version).admit(report)
    assert errors == [] and pruned == report  # nothing the CRD does not declare, nothing it refuses
    assert report["summary"] == {"pass": 2, "fail": 2, "warn": 1, "error": 1, "skip": 1}
    assert [r["resources"][0]["name"] for r in report["results"]] == sorted(f.name for f in FINDINGS)
    assert ("source" in report) == (key == "openreports")


def test_a_bad_result_is_refused_by_the_schema():
    [report] = reports(APIS["policyreport"], [FINDINGS[0].reference()], "expand", 1)
    report["results"][0]["result"] = "flattened"
    _, errors = schema("wgpolicyk8s.io_policyreports.yaml", "v1alpha2").admit(report)
    assert errors == ['results[0].result: Unsupported value: "flattened": supported values: '
                      '"pass", "fail", "warn", "error", "skip"']


def many(n: int, namespace: str = "big") -> list[dict]:
    return [Finding(namespace, f"vm-{i:05d}", "flatten", ops=20, fields=[f"/spec/template/spec/domain/f{j}"
                                                                          for j in range(12)],
                    policy="expandAll", uid=f"{i:08d}-0000-0000-0000-000000000000").reference() for i in range(n)]


def test_a_namespace_too_large_for_one_object_is_split_in_order():
    findings = many(3000) + many(3, "small")
    one = reports(APIS["policyreport"], findings, "expandAll", 1, max_bytes=10**9)
    assert len(orjson.dumps(one[0])) > 1536 * 1024  # one object would be over etcd's limit
    parts = reports(APIS["policyreport"], findings, "expandAll", 1)
    big = [p for p in parts if p["metadata"]["namespace"] == "big"]
    assert [p["metadata"]["name"] for p in big] == ["instancetype-webhook", "instancetype-webhook-2",
                                                    "instancetype-webhook-3"]
    assert [p["metadata"]["annotations"][PART] for p in big] == ["1/3", "2/3", "3/3"]
    assert all(len(orjson.dumps(p)) <= MAX_BYTES for p in parts)
    names = [r["resources"][0]["name"] for p in big for r in p["results"]]
    assert names == [f"vm-{i:05d}" for i in range(3000)]  # each VM once, in order
    assert sum(p["summary"]["warn"] for p in big) == 3000
    assert [p["metadata"]["name"] for p in parts if p["metadata"]["namespace"] == "small"] == ["instancetype-webhook"]


def test_the_message_names_each_cause_once():
    same = Finding("ns", "x", "refuse", reason="cores conflicts", causes=[{"message": "cores conflicts", "field": "f"}])
    assert result(same.reference(), "expand", 1)["message"] == "cores conflicts"
    more = Finding("ns", "x", "refuse", reason="2 conflicts", causes=[{"message": "a", "field": "f.a"},
                                                                      {"message": "b", "field": "f.b"}])
    assert result(more.reference(), "expand", 1)["message"] == "2 conflicts (f.a: a; f.b: b)"


def test_long_texts_are_cut():
    finding = Finding("ns", "x", "refuse", reason="r" * 10000, uid="u").reference()
    r = result(finding, "expand", 1)
    assert len(r["message"]) == 2048 and r["message"].endswith("...")

