"""`instancetype-webhook audit` and `sweep` on the fake API server: output shapes, exit codes, the policy
authority (VM annotation vs namespace label), the progress bar only on a terminal."""
from __future__ import annotations

import json
import time

import pytest
import yaml

from instancetype_webhook.admission.policy import POLICY_KEY
from instancetype_webhook.cli import main
from instancetype_webhook.fleet.sweep import RateLimiter
from tests.fakeapi.apiserver import FakeAPIServer
from tests.kit.fleet_cluster import catalog_fake, vm


@pytest.fixture(scope="module")
def fake():
    server = catalog_fake()
    server.add({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "apps"}})
    server.add({"apiVersion": "v1", "kind": "Namespace",
                "metadata": {"name": "kept", "labels": {POLICY_KEY: "reference"}}})
    server.add(vm("web", "apps", "u1.medium", "fedora"))
    server.add(vm("plain", "apps", None, None))
    opted_out = vm("opted-out", "apps", "u1.small", None)
    opted_out["metadata"]["annotations"][POLICY_KEY] = "reference"
    server.add(opted_out)
    server.add(vm("legacy", "kept", "u1.small", None))
    server.add(vm("broken", "other", "nope", None))
    yield server
    server.stop()


@pytest.fixture(scope="module")
def config(fake, tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("kube") / "kubeconfig"
    doc = json.loads(fake.kubeconfig())
    doc["contexts"][0]["context"]["namespace"] = "apps"
    path.write_text(json.dumps(doc))
    return str(path)


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_audit_json_shape_policy_authority_and_exit_code(capsys, config):
    code, out, _ = run(capsys, "audit", "--kubeconfig", config, "-A", "-o", "json")
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
    _, out, _ = run(capsys, "audit", "--kubeconfig", config, "-A", "-o", "json", "--allow-vm-policy")
    assert {v["name"]: v["action"] for v in json.loads(out)["vms"]}["opted-out"] == "skip"


def test_audit_default_namespace_table_and_yaml(capsys, config):
    code, out, _ = run(capsys, "audit", "--kubeconfig", config)  # the context's namespace: apps
    assert code == 0
    lines = out.splitlines()
    assert any(line.split()[:3] == ["apps", "web", "flatten"] for line in lines)
    assert not any(" plain " in line for line in lines[:3])  # unchanged VMs are only counted
    assert lines[-2].split()[:2] == ["apps", "2"] and lines[-1].split() == ["TOTAL", "2", "0", "0", "0", "1"]
    code, out, _ = run(capsys, "audit", "--kubeconfig", config, "-n", "other", "-o", "yaml")
    assert code == 1 and yaml.safe_load(out)["summary"]["unresolved"] == 1


def test_progress_bar_only_on_a_terminal(capsys, config):
    _, _, err = run(capsys, "audit", "--kubeconfig", config, "-A", "-o", "json")
    assert "vm/s" not in err and "\raudit" not in err  # stderr is not a terminal here: no bar
    _, _, err = run(capsys, "audit", "--kubeconfig", config, "-A", "-o", "json", "--progress", "always")
    assert "\raudit" in err and "5/5" in err and "vm/s" in err


def test_sweep_writes_then_writes_nothing(capsys, config, fake):
    code, out, _ = run(capsys, "sweep", "--kubeconfig", config, "-n", "apps", "-o", "json")
    doc = json.loads(out)
    assert code == 0 and doc["writes"] == 2 and doc["summary"]["flattened"] == 2
    assert "instancetype" not in fake.get("VirtualMachine", "web", "apps")["spec"]
    code, out, _ = run(capsys, "sweep", "--kubeconfig", config, "-n", "apps")
    assert code == 0 and "writes: 0" in out


def test_unusable_cluster_and_bad_flags_exit_2(capsys, tmp_path):
    gone = FakeAPIServer()
    config = tmp_path / "kubeconfig"
    config.write_text(gone.kubeconfig())
    gone.stop()
    code, _, err = run(capsys, "audit", "--kubeconfig", str(config), "-A", "--sync-timeout", "1")
    assert code == 2 and "not listed within 1s" in err
    code, _, err = run(capsys, "sweep", "--kubeconfig", str(config), "--shard", "3/3")
    assert code == 2 and "need 0 <= I < N" in err
    code, _, err = run(capsys, "audit", "--kubeconfig", str(tmp_path / "missing"))
    assert code == 2 and "cannot load the kubeconfig" in err


def test_rate_limiter_spaces_writes():
    limiter = RateLimiter(50)
    start = time.monotonic()
    for _ in range(11):
        limiter.acquire()
    assert time.monotonic() - start >= 0.19  # 10 intervals of 20 ms
    unlimited = RateLimiter(0)
    start = time.monotonic()
    for _ in range(1000):
        unlimited.acquire()
    assert time.monotonic() - start < 0.5
