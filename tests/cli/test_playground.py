"""`instancetype-webhook playground` (cli/playground.py): the page on its own, offline with -f files
or read-only against a cluster (the strict fake API server)."""
from __future__ import annotations

import time

import pytest
import yaml

from instancetype_webhook.cli import main
from tests.fakeapi.apiserver import FakeAPIServer
from tests.kit.playground_live import playground

SMALL = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineInstancetype",
         "metadata": {"name": "team-small", "namespace": "team"},
         "spec": {"cpu": {"guest": 3}, "memory": {"guest": "3Gi"}}}


def vm_text(namespace: str) -> str:
    return yaml.safe_dump({
        "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
        "metadata": {"name": "mine", "namespace": namespace},
        "spec": {"instancetype": {"kind": "VirtualMachineInstancetype", "name": "team-small"},
                 "template": {"spec": {"domain": {"devices": {}}}}}}, sort_keys=False)


def test_files_add_samples_and_reference_objects_offline(tmp_path):
    (tmp_path / "mine.yaml").write_text(vm_text("team"))
    (tmp_path / "types.yaml").write_text(yaml.safe_dump(SMALL))
    with playground(tmp_path, "-f", str(tmp_path / "mine.yaml"), "-f", str(tmp_path / "types.yaml"),
                    "--policy", "expand") as live, live.client() as client:
        samples = client.get("/playground/api/samples").json()
        catalog = client.get("/playground/api/catalog").json()
        here = client.post("/playground/api/run", json={"text": samples[-1]["text"]}).json()
        elsewhere = client.post("/playground/api/run", json={"text": vm_text("other")}).json()
    assert samples[-1]["name"] == "mine" and samples[-1]["text"] == vm_text("team")
    assert {"VirtualMachineInstancetype/team-small", "u1.medium"} <= set(catalog["instancetypes"])
    assert catalog["policy"] == "expand"
    stored = yaml.safe_load(here["storedYAML"])
    assert stored["spec"]["template"]["spec"]["domain"]["memory"] == {"guest": "3Gi"}
    # one namespace's instance type never shapes another namespace's VM
    assert elsewhere["allowed"] is False and "team-small" in elsewhere["status"]["message"]


def test_it_prints_its_loopback_address(tmp_path):
    with playground(tmp_path) as live:
        deadline = time.monotonic() + 5
        while "playground: " not in live.logs() and time.monotonic() < deadline:
            time.sleep(0.05)
        port = live.url.rsplit(":", 1)[1]
        assert f"playground: https://127.0.0.1:{port}/playground" in live.logs()


def test_read_only_against_a_cluster(tmp_path):
    fake = FakeAPIServer()
    fake.add(SMALL)
    config = tmp_path / "kubeconfig"
    config.write_text(fake.kubeconfig())
    try:
        with playground(tmp_path, "--kubeconfig", str(config), "--policy", "expand") as live, \
                live.client() as client:
            catalog = client.get("/playground/api/catalog").json()
            out = client.post("/playground/api/run", json={"text": vm_text("team")}).json()
        assert catalog["instancetypes"] == ["VirtualMachineInstancetype/team-small"]
        assert catalog["source"] == f"cluster ({config})"
        assert out["allowed"] is True and "instancetype:" not in out["storedYAML"]
        assert fake.writes == 0
        assert [r for r in fake.requests if r.split(" ", 1)[0] in ("POST", "PUT", "PATCH", "DELETE")] == []
    finally:
        fake.stop()


@pytest.mark.parametrize(("args", "error"), [
    (["-f", "x.yaml", "--kubeconfig", "k"], "playground: -f files are added to the offline catalogue"),
    (["-f", "/nonexistent/vm.yaml"], "playground: /nonexistent/vm.yaml: cannot read"),
    (["--port", "70000"], "playground: --port: Input should be less than or equal to 65535"),
])
def test_bad_arguments_exit_2_with_one_line(capsys, args, error):
    assert main(["playground", *args]) == 2
    assert capsys.readouterr().err.startswith(error)


def test_a_file_that_is_not_objects(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("- just\n- a list\n")
    assert main(["playground", "-f", str(bad)]) == 2
    assert "expected a Kubernetes object" in capsys.readouterr().err
