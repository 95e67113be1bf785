"""`instancetype-webhook fn` (cli/fn.py): a ResourceList in, a ResourceList out with VMs flattened (expand) or
`results` (validate); as a kustomize exec plugin under the real `kubectl kustomize --enable-alpha-plugins`, the
rendered VM is what `expand` prints."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.kit.cli import ROOT, run_main
from tests.kit.needs import need_command

EXAMPLES = ROOT / "examples"
VM = json.loads((EXAMPLES / "vm.json").read_text())
CONFLICT = json.loads((EXAMPLES / "vm-conflict.json").read_text())["request"]["object"]
CM = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "namespace": "default"},
      "data": {"a": "b"}}


def resource_list(*items: dict, **config: str) -> str:
    body: dict = {"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": list(items)}
    if config:
        body["functionConfig"] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "fn"}, "data": config}
    return yaml.safe_dump(body)


def expanded(*argv: str, stdin: str = "") -> dict:
    code, out, err = run_main("expand", "-o", "json", *argv, stdin=stdin)
    assert code == 0, err
    return json.loads(out)


def test_expand_flattens_each_vm_and_leaves_the_rest():
    code, out, err = run_main("fn", stdin=resource_list(CM, VM))
    assert code == 0 and err == ""
    answer = yaml.safe_load(out)
    assert answer["kind"] == "ResourceList" and answer["apiVersion"] == "config.kubernetes.io/v1"
    assert answer["items"] == [CM, expanded("-f", str(EXAMPLES / "vm.json"))]
    assert "results" not in answer


def test_the_release_comes_from_the_function_config():
    code, out, _ = run_main("fn", stdin=resource_list(VM, kubevirtVersion="v1.7.4"))
    assert code == 0
    assert yaml.safe_load(out)["items"] == [expanded("-f", str(EXAMPLES / "vm.json"), "--kubevirt-version", "v1.7.4")]
    assert yaml.safe_load(out)["items"] != [expanded("-f", str(EXAMPLES / "vm.json"))]


def test_instance_types_among_the_items_are_used():
    instancetype = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineInstancetype",
                    "metadata": {"name": "tiny", "namespace": "default"},
                    "spec": {"cpu": {"guest": 3}, "memory": {"guest": "3Gi"}}}
    vm = {**VM, "spec": {**VM["spec"], "instancetype": {"kind": "VirtualMachineInstancetype", "name": "tiny"}}}
    code, out, _ = run_main("fn", stdin=resource_list(vm, instancetype))
    flat, kept = yaml.safe_load(out)["items"]
    assert code == 0 and kept == instancetype
    assert flat["spec"]["template"]["spec"]["domain"]["cpu"]["sockets"] == 3


def test_validate_reports_results_and_leaves_the_items():
    code, out, _ = run_main("fn", stdin=resource_list(VM, CONFLICT, mode="validate"))
    answer = yaml.safe_load(out)
    assert code == 1
    assert answer["items"] == [VM, CONFLICT]
    ref = {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "name": "fedora-conflict", "namespace": "default"}
    assert {(r["severity"], r["field"]["path"]) for r in answer["results"]} == {
        ("error", "spec.template.spec.domain.cpu.sockets"), ("error", "spec.template.spec.domain.memory.guest")}
    assert all(r["resourceRef"] == ref and "conflicts with selected instance type" in r["message"]
               for r in answer["results"])


def test_expand_reports_a_vm_it_cannot_flatten():
    code, out, _ = run_main("fn", stdin=resource_list(VM, CONFLICT))
    answer = yaml.safe_load(out)
    assert code == 1 and answer["items"][1] == CONFLICT and answer["items"][0] != VM
    assert {r["severity"] for r in answer["results"]} == {"error"}


@pytest.mark.parametrize("stdin, message", [
    (yaml.safe_dump(VM), "stdin: expected one ResourceList (config.kubernetes.io/v1), got VirtualMachine"),
    (resource_list(VM, mode="flatten"), "functionConfig: mode 'flatten'; expected one of expand, validate"),
    (resource_list(VM, kubevirtVersion="v1.5"), "--kubevirt-version: KubeVirt v1.5.0 is older"),
    ("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: [1]\n", "items must be a list of objects"),
])
def test_what_it_cannot_read_is_one_line_and_exit_2(stdin, message):
    code, out, err = run_main("fn", stdin=stdin)
    assert (code, out) == (2, "")
    assert len(err.splitlines()) == 1 and message in err


def test_as_an_exec_plugin_it_reads_documents_and_a_config_file(tmp_path):
    config = tmp_path / "config.yaml"
    config.write_text("apiVersion: instancetype-webhook.kubevirt.io/v1alpha1\nkind: VMFunction\n"
                      "metadata: {name: check}\nmode: validate\n")
    code, out, err = run_main("fn", str(config), stdin=yaml.safe_dump_all([VM, CONFLICT]))
    assert code == 1 and list(yaml.safe_load_all(out)) == [VM, CONFLICT]
    assert err.startswith("error: VirtualMachine/default/fedora-conflict: VM field(s) spec.template.spec.domain.")


def kustomization(tmp_path: Path, mode: str, *resources: dict) -> tuple[Path, dict[str, str]]:
    """A kustomization of `resources` transformed by the function, and the environment that finds the plugin
    (a wrapper running this checkout's `fn`, where KUSTOMIZE_PLUGIN_HOME says kustomize looks)."""
    plugin = tmp_path / "plugins" / "instancetype-webhook.kubevirt.io" / "v1alpha1" / "vmfunction" / "VMFunction"
    plugin.parent.mkdir(parents=True)
    plugin.write_text(f'#!/bin/sh\nPYTHONPATH="{ROOT}" exec "{sys.executable}" -m instancetype_webhook fn "$@"\n')
    plugin.chmod(0o755)
    app = tmp_path / "app"
    app.mkdir()
    names = []
    for index, resource in enumerate(resources):
        names.append(f"r{index}.yaml")
        (app / names[-1]).write_text(yaml.safe_dump(resource))
    (app / "function.yaml").write_text(yaml.safe_dump({
        "apiVersion": "instancetype-webhook.kubevirt.io/v1alpha1", "kind": "VMFunction",
        "metadata": {"name": mode}, "mode": mode}))
    (app / "kustomization.yaml").write_text(yaml.safe_dump({"resources": names, "transformers": ["function.yaml"]}))
    return app, {**os.environ, "KUSTOMIZE_PLUGIN_HOME": str(tmp_path / "plugins")}


def test_kubectl_kustomize_renders_the_vm_as_expand_flattens_it(tmp_path):
    kubectl = need_command("kubectl", "https://kubernetes.io/docs/tasks/tools/")
    app, env = kustomization(tmp_path, "expand", CM, VM)
    done = subprocess.run([kubectl, "kustomize", "--enable-alpha-plugins", str(app)], env=env, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    rendered = {doc["kind"]: doc for doc in yaml.safe_load_all(done.stdout)}
    assert rendered["VirtualMachine"] == expanded("-f", str(EXAMPLES / "vm.json"))
    assert rendered["ConfigMap"] == CM


def test_kubectl_kustomize_fails_on_a_vm_that_validate_rejects(tmp_path):
    kubectl = need_command("kubectl", "https://kubernetes.io/docs/tasks/tools/")
    app, env = kustomization(tmp_path, "validate", CONFLICT)
    done = subprocess.run([kubectl, "kustomize", "--enable-alpha-plugins", str(app)], env=env, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode != 0 and done.stdout == ""
    assert "VirtualMachine/default/fedora-conflict" in done.stderr
    assert "conflicts with selected instance type" in done.stderr


def kpt_package(tmp_path: Path, mode: str, *resources: dict) -> tuple[Path, Path, Path]:
    """A kpt package of `resources`, the function config, and an executable running this checkout's `fn` as a
    KRM function (a ResourceList on stdin, a ResourceList out)."""
    package = tmp_path / "package"
    package.mkdir()
    for index, resource in enumerate(resources):
        (package / f"r{index}.yaml").write_text(yaml.safe_dump(resource))
    config = tmp_path / "fn-config.yaml"
    config.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "fn-config"},
                                      "data": {"mode": mode}}))
    function = tmp_path / "vm-function"
    function.write_text(f'#!/bin/sh\nPYTHONPATH="{ROOT}" exec "{sys.executable}" -m instancetype_webhook fn\n')
    function.chmod(0o755)
    return package, config, function


def _stored(document: dict) -> dict:
    """A document as kpt writes it back: without the annotations kpt keeps for itself."""
    meta = document.get("metadata") or {}
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items()
                   if not k.startswith(("config.kubernetes.io/", "internal.config.kubernetes.io/"))}
    return {**document, "metadata": {**{k: v for k, v in meta.items() if k != "annotations"},
                                     **({"annotations": annotations} if annotations else {})}}


def test_kpt_fn_eval_flattens_the_vm_as_expand_does(tmp_path):
    kpt = need_command("kpt", "the machine image's google-cloud-cli-kpt package")
    package, config, function = kpt_package(tmp_path, "expand", CM, VM)
    done = subprocess.run([kpt, "fn", "eval", str(package), "--exec", str(function), "--fn-config", str(config)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    stored = {doc["kind"]: _stored(doc) for path in sorted(package.glob("*.yaml"))
              for doc in yaml.safe_load_all(path.read_text())}
    assert stored["VirtualMachine"] == expanded("-f", str(EXAMPLES / "vm.json"))
    assert stored["ConfigMap"] == CM


def test_kpt_fn_eval_reports_a_vm_that_validate_rejects(tmp_path):
    kpt = need_command("kpt", "the machine image's google-cloud-cli-kpt package")
    package, config, function = kpt_package(tmp_path, "validate", CONFLICT)
    done = subprocess.run([kpt, "fn", "eval", str(package), "--exec", str(function), "--fn-config", str(config)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode != 0
    assert "conflicts with selected instance type" in done.stdout + done.stderr
