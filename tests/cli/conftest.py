"""The cluster of the fleet commands' tests (tests/cli/test_audit.py, test_sweep.py, test_fleet.py): the fake API
server with the bundled catalogue and a VM for every action, and a kubeconfig whose context namespace is `apps`.
Module-scoped: each test module gets its own cluster (a sweep's writes never reach an audit's)."""
from __future__ import annotations

import json

import pytest

from instancetype_webhook.admission.policy import POLICY_KEY
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
