"""`instancetype-webhook audit` on the fake API server (tests/cli/conftest.py): output shapes, exit codes, the
policy authority (VM annotation vs namespace label), the flags it checks before reading the cluster."""
from __future__ import annotations

import json

import pytest
import yaml

from tests.kit.cli import run_main


def test_audit_json_shape_policy_authority_and_exit_code(config):
    code, out, _ = run_main("audit", "--kubeconfig", config, "-A", "-o", "json")
    doc = json.loads(out)
    assert code == 1 and doc["policy"] == "expandAll"
    assert doc["summary"] == {"flatten": 2, "refuse": 0, "skip": 1, "unresolved": 1, "unchanged": 1}
    vms = {v["name"]: v for v in doc["vms"]}
    assert set(vms["web"]) >= {"namespace", "name", "action", "ops", "fields", "causes", "reason"}
    assert vms["web"]["action"] == "flatten" and vms["web"]["ops"] > 3 and "/spec/instancetype" in vms["web"]["fields"]
    # the owner's annotation is ignored (with the webhook's warning); the namespace label holds
    assert vms["opted-out"]["action"] == "flatten"
    assert any("annotation ignored" in w for w in vms["opted-out"]["warnings"])
    assert vms["legacy"]["action"] == "skip" and vms["legacy"]["policy"] == "reference"
    assert vms["broken"]["action"] == "unresolved" and '"nope" not found' in vms["broken"]["reason"]
    assert vms["plain"]["action"] == "unchanged"
    _, out, _ = run_main("audit", "--kubeconfig", config, "-A", "-o", "json", "--allow-vm-policy")
    assert {v["name"]: v["action"] for v in json.loads(out)["vms"]}["opted-out"] == "skip"


def test_audit_default_namespace_table_and_yaml(config):
    code, out, _ = run_main("audit", "--kubeconfig", config)  # the context's namespace: apps
    assert code == 0
    lines = out.splitlines()
    assert any(line.split()[:3] == ["apps", "web", "flatten"] for line in lines)
    assert not any(" plain " in line for line in lines[:3])  # unchanged VMs are only counted
    assert lines[-2].split()[:2] == ["apps", "2"] and lines[-1].split() == ["TOTAL", "2", "0", "0", "0", "1"]
    code, out, _ = run_main("audit", "--kubeconfig", config, "-n", "other", "-o", "yaml")
    assert code == 1 and yaml.safe_load(out)["summary"]["unresolved"] == 1


def test_exit_zero_keeps_the_findings_but_exits_0(config):
    code, out, _ = run_main("audit", "--kubeconfig", config, "-n", "other", "-o", "json")
    assert code == 1 and json.loads(out)["summary"]["unresolved"] == 1
    code, out, _ = run_main("audit", "--kubeconfig", config, "-n", "other", "-o", "json", "--exit-zero")
    assert code == 0 and json.loads(out)["summary"]["unresolved"] == 1


def test_the_policy_flag_decides(config):
    _, out, _ = run_main("audit", "--kubeconfig", config, "-n", "apps", "-o", "json", "--policy", "reference")
    doc = json.loads(out)
    assert doc["policy"] == "reference"
    assert {v["name"]: v["action"] for v in doc["vms"]}["web"] == "skip"


@pytest.mark.parametrize(("argv", "error"), [
    (["--report", "policyreport", "--shard", "0/2"], "audit: --report covers whole namespaces; it cannot be "
                                                     "combined with --shard"),
    (["--report-max-bytes", "65535"], "audit: --report-max-bytes must be at least 65536"),
    (["--kubevirt-version", "v1.x"], "audit: --kubevirt-version: cannot parse KubeVirt version 'v1.x'"),
])
def test_flags_that_cannot_work_are_one_line_and_exit_2_before_the_cluster_is_read(tmp_path, argv, error):
    code, out, err = run_main("audit", "--kubeconfig", str(tmp_path / "never-read"), *argv)
    assert (code, out) == (2, "")
    assert err.startswith(error) and err.count("\n") == 1 and err.endswith("\n")


def test_report_max_bytes_at_the_floor_is_accepted(config):
    code, out, _ = run_main("audit", "--kubeconfig", config, "-n", "apps", "-o", "json", "--report-max-bytes",
                            "65536")
    assert code == 0 and json.loads(out)["summary"]["flatten"] == 2
