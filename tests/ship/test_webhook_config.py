"""webhook_config/: the plain manifests, as files and as `kubectl kustomize` renders them with real certificates."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.kit.needs import need_command
from tests.kit.ship_checks import (
    Wiring,
    check_ca,
    check_deployment,
    check_rbac,
    check_schemas,
    check_webhooks,
    load_documents,
    match_condition_sends,
    webhooks,
)

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "webhook_config"
KUBECTL_INSTALL = "kubectl >= 1.21 (built-in kustomize v4) on PATH, e.g. from the machine image's google-cloud-cli"
WIRING = Wiring(namespace="instancetype-webhook", service="instancetype-webhook")
CLI = [sys.executable, "-m", "instancetype_webhook"]


def kustomization() -> dict:
    return yaml.safe_load((CONFIG / "kustomization.yaml").read_text())


def listed_objects() -> list[dict]:
    objs = []
    for name in kustomization()["resources"]:
        objs += load_documents((CONFIG / name).read_text())
    return objs


def test_kustomization_lists_every_manifest():
    on_disk = {p.name for p in CONFIG.glob("*.yaml")} - {"kustomization.yaml"}
    assert set(kustomization()["resources"]) == on_disk


def test_listed_manifests_pass_schema_and_invariants():
    objs = listed_objects()
    assert check_schemas(objs) == []  # nothing from a CRD in the plain manifests
    check_webhooks(objs, WIRING)
    check_rbac(objs, WIRING, service_account="instancetype-webhook")
    volume = check_deployment(objs, WIRING)
    assert volume["secret"]["secretName"] == "instancetype-webhook-tls"
    assert {o["metadata"]["namespace"] for o in objs if "namespace" in o["metadata"]} == {WIRING.namespace}


def test_the_ca_replacement_targets_every_webhook():
    targets = {t["select"]["kind"]: t["fieldPaths"] for r in kustomization()["replacements"] for t in r["targets"]}
    assert targets == {
        "MutatingWebhookConfiguration": ["webhooks.*.clientConfig.caBundle"],
        "ValidatingWebhookConfiguration": ["webhooks.*.clientConfig.caBundle"],
    }


@pytest.fixture(scope="module")
def kustomized(tmp_path_factory) -> list[dict]:
    """The manifests as `kubectl apply -k` would send them, after `instancetype-webhook certs`."""
    kubectl = need_command("kubectl", KUBECTL_INSTALL)  # its built-in kustomize builds the manifests
    work = tmp_path_factory.mktemp("kustomize") / "webhook_config"
    shutil.copytree(CONFIG, work, ignore=shutil.ignore_patterns("tls"))
    gen = subprocess.run(CLI + ["certs", "--service", WIRING.service, "--namespace", WIRING.namespace,
                                "--out", str(work / "tls")], capture_output=True, text=True, cwd=ROOT, check=True)
    built = subprocess.run([kubectl, "kustomize", str(work)], capture_output=True, text=True, check=True)
    objs = load_documents(built.stdout)
    objs.append({"_caBundle": gen.stdout.strip()})
    return objs


def test_kustomize_build_passes_schema_and_invariants(kustomized):
    printed_bundle = kustomized[-1]["_caBundle"]
    objs = kustomized[:-1]
    assert check_schemas(objs) == []
    check_webhooks(objs, WIRING)
    check_rbac(objs, WIRING, service_account="instancetype-webhook")
    volume = check_deployment(objs, WIRING)
    assert check_ca(objs, WIRING) == "caBundle"
    (secret,) = [o for o in objs if o["kind"] == "Secret"]
    assert volume["secret"]["secretName"] == secret["metadata"]["name"]  # hash-suffixed name followed
    for _kind, _cfg, hook in webhooks(objs):
        assert "".join(hook["clientConfig"]["caBundle"].split()) == printed_bundle


def test_kustomize_without_certificates_fails_loudly(tmp_path):
    kubectl = need_command("kubectl", KUBECTL_INSTALL)
    work = tmp_path / "webhook_config"
    shutil.copytree(CONFIG, work, ignore=shutil.ignore_patterns("tls"))
    built = subprocess.run([kubectl, "kustomize", str(work)], capture_output=True, text=True)
    assert built.returncode != 0 and "tls" in built.stderr


VM_REF = {"spec": {"instancetype": {"name": "u1.small"}, "template": {"spec": {}}}}
VM_PREF = {"spec": {"preference": {"name": "fedora"}, "template": {"spec": {}}}}
VM_INFER = {"spec": {"instancetype": {"inferFromVolume": "root"}, "template": {"spec": {}}}}
VM_PLAIN = {"spec": {"template": {"spec": {"domain": {"cpu": {"cores": 2}}}}}}
VM_ANNOTATED = {**VM_PLAIN, "metadata": {"annotations": {"instancetype-webhook.kubevirt.io/policy": "expand"}}}


@pytest.mark.parametrize("operation,obj,old,sent", [
    ("CREATE", VM_REF, None, True),
    ("CREATE", VM_PREF, None, True),
    ("CREATE", VM_INFER, None, True),
    ("CREATE", VM_PLAIN, None, False),
    ("CREATE", {"metadata": {"name": "no-spec"}}, None, False),
    ("UPDATE", VM_PLAIN, VM_REF, True),     # removing a reference is still reviewed
    ("UPDATE", VM_PLAIN, VM_PREF, True),
    ("UPDATE", VM_REF, VM_PLAIN, True),     # adding one too
    ("UPDATE", VM_PLAIN, VM_PLAIN, False),
    ("CREATE", VM_ANNOTATED, None, True),   # a policy annotation is reviewed (a bad value gets a warning)
    ("CREATE", {**VM_PLAIN, "metadata": {"annotations": {"other": "x"}}}, None, False),
])
def test_match_condition_skips_only_vms_without_any_reference(operation, obj, old, sent):
    for _kind, _cfg, hook in webhooks(listed_objects()):
        conditions = hook.get("matchConditions", [])
        if "virtualmachines" in hook["rules"][0]["resources"]:
            (condition,) = conditions
            assert match_condition_sends(condition["expression"], operation, obj, old) is sent, hook["name"]
        else:
            assert conditions == [], "instance type objects are always validated"


def _set(path: str, value):
    def mutate(objs: list[dict]) -> None:
        kind, *keys = path.split(".")
        target = next(o for o in objs if o["kind"] == kind)
        for key in keys[:-1]:
            target = target[int(key)] if key.isdigit() else target[key]
        last = keys[-1]
        if value is _DELETE:
            del target[last]
        else:
            target[int(last) if last.isdigit() else last] = value
    return mutate


_DELETE = object()


@pytest.mark.parametrize("mutate,check", [
    (_set("MutatingWebhookConfiguration.webhooks.0.sideEffects", "Unknown"), "webhooks"),
    (_set("ValidatingWebhookConfiguration.webhooks.1.admissionReviewVersions", ["v1", "v1beta1"]), "webhooks"),
    (_set("MutatingWebhookConfiguration.webhooks.0.reinvocationPolicy", "Never"), "webhooks"),
    (_set("MutatingWebhookConfiguration.webhooks.0.clientConfig.service.path", "/validate"), "webhooks"),
    (_set("ValidatingWebhookConfiguration.webhooks.0.namespaceSelector.matchExpressions.0.values", ["kube-system"]),
     "webhooks"),
    (_set("ValidatingWebhookConfiguration.webhooks.1.rules.0.resources", ["virtualmachineinstancetypes"]), "webhooks"),
    (_set("MutatingWebhookConfiguration.webhooks.0.rules.0.operations", ["CREATE", "UPDATE", "DELETE"]), "webhooks"),
    (_set("ClusterRole.rules.0.verbs", ["get", "list", "watch", "update"]), "rbac"),
    (_set("ClusterRole.rules.1.verbs", ["get", "list"]), "rbac"),
    (_set("Deployment.spec.template.spec.containers.0.args", ["--port=8443"]), "deployment"),
    (_set("Deployment.spec.template.spec.containers.0.securityContext.readOnlyRootFilesystem", False), "deployment"),
    (_set("Deployment.spec.template.spec.containers.0.securityContext.capabilities", {"drop": ["NET_RAW"]}),
     "deployment"),
    (_set("Deployment.spec.template.spec.securityContext.seccompProfile", _DELETE), "deployment"),
    (_set("Deployment.spec.template.spec.containers.0.readinessProbe.httpGet.scheme", "HTTP"), "deployment"),
    (_set("Deployment.spec.template.spec.containers.0.securityContext.allowPrivilegeEscalation", True), "deployment"),
    (_set("Service.spec.ports.0.targetPort", 9443), "deployment"),
    (_set("Deployment.spec.replicas", "3"), "schema"),
    (_set("Deployment.spec.template.spec.containers.0.securityContext.capabilities", {"drop": "ALL"}), "schema"),
    (_set("MutatingWebhookConfiguration.webhooks.0.timeoutSecond", 10), "schema"),
])
def test_the_checks_catch_a_broken_manifest(mutate, check):
    objs = listed_objects()
    mutate(objs)
    run = {
        "webhooks": lambda: check_webhooks(objs, WIRING),
        "rbac": lambda: check_rbac(objs, WIRING, service_account="instancetype-webhook"),
        "deployment": lambda: check_deployment(objs, WIRING),
        "schema": lambda: check_schemas(objs),
    }[check]
    with pytest.raises(AssertionError):
        run()
