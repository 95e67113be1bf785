"""Checks every install path must pass: Kubernetes schemas, webhook registrations, RBAC, pod security.

Used by test_webhook_config.py (plain manifests) and test_chart.py (rendered Helm chart).
"""
from __future__ import annotations

import base64
from dataclasses import dataclass

import celpy
import kubernetes_validate
import yaml
from cryptography import x509

# Schemas are checked against a fixed Kubernetes version: 1.30, where matchConditions are GA.
KUBE_VERSION = "1.30.0"

# Kinds from CRDs that kubernetes-validate has no schema for. Their schema is skipped explicitly and
# `check_crd_object` checks their required fields by hand instead.
CRD_KINDS = {
    ("cert-manager.io/v1", "Issuer"),
    ("cert-manager.io/v1", "Certificate"),
    ("monitoring.coreos.com/v1", "ServiceMonitor"),
}

INSTANCETYPE_RESOURCES = {
    "virtualmachineinstancetypes", "virtualmachineclusterinstancetypes",
    "virtualmachinepreferences", "virtualmachineclusterpreferences",
}
VM_RULE = ("kubevirt.io", "v1", "virtualmachines", frozenset({"CREATE", "UPDATE"}))
INSTANCETYPE_RULES = {("instancetype.kubevirt.io", "v1beta1", r, frozenset({"CREATE", "UPDATE"}))
                      for r in INSTANCETYPE_RESOURCES}
EXPECTED_RULES = {"/mutate": {VM_RULE}, "/validate": {VM_RULE} | INSTANCETYPE_RULES}

EXPECTED_RBAC = {
    ("instancetype.kubevirt.io", resource, frozenset({"get", "list", "watch"})) for resource in INSTANCETYPE_RESOURCES
} | {("apps", "controllerrevisions", frozenset({"get", "list", "watch"}))} | {("kubevirt.io", "kubevirts",
                                                              frozenset({"get", "list", "watch"}))} | {
    # inferFromVolume: looked up on demand (instancetype_webhook/sources/volumes.py), never listed or watched
    ("", "persistentvolumeclaims", frozenset({"get"})),
    ("cdi.kubevirt.io", "datavolumes", frozenset({"get"})),
    ("cdi.kubevirt.io", "datasources", frozenset({"get"})),
    ("snapshot.storage.k8s.io", "volumesnapshots", frozenset({"get"})),
    # the live-update warnings: a running VM's VMI, read on demand (instancetype_webhook/admission/liveupdate.py)
    ("kubevirt.io", "virtualmachineinstances", frozenset({"get"})),
}

WEBHOOK_KINDS = ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")
INJECT_CA = "cert-manager.io/inject-ca-from"


def load_documents(text: str) -> list[dict]:
    return [doc for doc in yaml.safe_load_all(text) if doc]


def by_kind(objs: list[dict], kind: str) -> list[dict]:
    return [o for o in objs if o["kind"] == kind]


def one(objs: list[dict], kind: str) -> dict:
    found = by_kind(objs, kind)
    assert len(found) == 1, f"expected one {kind}, found {len(found)}"
    return found[0]


# --- schemas ------------------------------------------------------------------------------------

def check_schemas(objs: list[dict]) -> list[str]:
    """Strict schema validation of every built-in object; returns the CRD kinds whose schema was skipped."""
    skipped = []
    for obj in objs:
        key = (obj["apiVersion"], obj["kind"])
        if key in CRD_KINDS:
            check_crd_object(obj)
            skipped.append(obj["kind"])
            continue
        try:
            kubernetes_validate.validate(obj, KUBE_VERSION, strict=True)
        except kubernetes_validate.ValidationError as exc:
            path = ".".join(str(p) for p in exc.path)
            raise AssertionError(f"{obj['kind']}/{obj['metadata'].get('name')}: {path}: {exc.message}") from None
    return skipped


def check_crd_object(obj: dict) -> None:
    meta, spec = obj.get("metadata", {}), obj.get("spec")
    assert meta.get("name") and isinstance(spec, dict), f"{obj['kind']} needs metadata.name and spec"
    if obj["kind"] == "Issuer":
        kinds = {"selfSigned", "ca", "acme", "vault", "venafi"} & set(spec)
        assert len(kinds) == 1, f"Issuer {meta['name']} must set exactly one issuer type, has {kinds}"
        if "ca" in spec:
            assert spec["ca"].get("secretName")
    elif obj["kind"] == "Certificate":
        assert spec.get("secretName") and spec.get("issuerRef", {}).get("name")
        assert spec.get("dnsNames") or spec.get("commonName")
    elif obj["kind"] == "ServiceMonitor":
        assert spec.get("selector", {}).get("matchLabels") and spec.get("endpoints")


# --- webhooks -----------------------------------------------------------------------------------

def selector_matches(selector: dict, labels: dict[str, str]) -> bool:
    """Kubernetes label-selector semantics (matchLabels + matchExpressions)."""
    for key, value in selector.get("matchLabels", {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions", []):
        key, op, values = expr["key"], expr["operator"], expr.get("values", [])
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and key in labels and labels[key] in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True


def namespace_labels(name: str) -> dict[str, str]:
    return {"kubernetes.io/metadata.name": name}  # set by the API server on every namespace


@dataclass(frozen=True)
class Wiring:
    namespace: str
    service: str
    service_port: int = 443


def webhooks(objs: list[dict]) -> list[tuple[str, dict, dict]]:
    return [(cfg["kind"], cfg, hook) for cfg in objs if cfg["kind"] in WEBHOOK_KINDS for hook in cfg["webhooks"]]


def check_webhooks(objs: list[dict], wiring: Wiring) -> None:
    assert len(by_kind(objs, "MutatingWebhookConfiguration")) == 1
    assert len(by_kind(objs, "ValidatingWebhookConfiguration")) == 1
    rules: dict[str, set] = {"/mutate": set(), "/validate": set()}
    for kind, _cfg, hook in webhooks(objs):
        name = hook["name"]
        assert hook["admissionReviewVersions"] == ["v1"], name
        assert hook["sideEffects"] == "None", name
        assert hook["matchPolicy"] == "Equivalent", name
        assert hook["failurePolicy"] in ("Fail", "Ignore"), name
        assert isinstance(hook["timeoutSeconds"], int) and 1 <= hook["timeoutSeconds"] <= 30, name
        service = hook["clientConfig"]["service"]
        assert (service["name"], service["namespace"], service.get("port", 443)) == (
            wiring.service, wiring.namespace, wiring.service_port), name
        assert "url" not in hook["clientConfig"], name
        expected_path = "/mutate" if kind == "MutatingWebhookConfiguration" else "/validate"
        assert service["path"] == expected_path, name
        if kind == "MutatingWebhookConfiguration":
            assert hook["reinvocationPolicy"] == "IfNeeded", name
        selector = hook["namespaceSelector"]
        for excluded in ("kube-system", wiring.namespace):
            assert not selector_matches(selector, namespace_labels(excluded)), f"{name} would see {excluded}"
        assert selector_matches(selector, namespace_labels("vms")), f"{name} would miss ordinary namespaces"
        for rule in hook["rules"]:
            for group in rule["apiGroups"]:
                for version in rule["apiVersions"]:
                    for resource in rule["resources"]:
                        rules[service["path"]].add((group, version, resource, frozenset(rule["operations"])))
    assert rules == EXPECTED_RULES


def check_ca(objs: list[dict], wiring: Wiring) -> str:
    """Each webhook configuration carries a caBundle that signs the serving certificate, or asks
    cert-manager to inject one from the serving Certificate. Returns "caBundle" or "inject"."""
    modes = set()
    for cfg in (o for o in objs if o["kind"] in WEBHOOK_KINDS):
        inject = cfg["metadata"].get("annotations", {}).get(INJECT_CA)
        bundles = {hook["clientConfig"].get("caBundle") for hook in cfg["webhooks"]}
        if inject:
            assert bundles == {None}, "caBundle must be left to cert-manager when it injects one"
            ns, name = inject.split("/")
            cert = [c for c in by_kind(objs, "Certificate") if c["metadata"]["name"] == name]
            assert ns == wiring.namespace and cert, f"{INJECT_CA} points to a missing Certificate {inject}"
            hosts = set(cert[0]["spec"]["dnsNames"])
            assert {f"{wiring.service}.{wiring.namespace}.svc",
                    f"{wiring.service}.{wiring.namespace}.svc.cluster.local"} <= hosts
            modes.add("inject")
        else:
            assert len(bundles) == 1 and None not in bundles and "" not in bundles, "every webhook needs the caBundle"
            ca = x509.load_pem_x509_certificate(base64.b64decode("".join(bundles.pop().split())))
            assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
            serving = serving_certificate(objs)
            if serving is not None:
                serving.verify_directly_issued_by(ca)
                sans = serving.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
                assert f"{wiring.service}.{wiring.namespace}.svc" in sans.get_values_for_type(x509.DNSName)
            modes.add("caBundle")
    assert len(modes) == 1
    return modes.pop()


def serving_certificate(objs: list[dict]) -> x509.Certificate | None:
    for secret in by_kind(objs, "Secret"):
        if secret.get("type") == "kubernetes.io/tls":
            return x509.load_pem_x509_certificate(base64.b64decode("".join(secret["data"]["tls.crt"].split())))
    return None


_CEL = celpy.Environment()


def match_condition_sends(expression: str, operation: str, obj: dict, old: dict | None) -> bool:
    """Evaluate a matchCondition with a CEL interpreter for one admission request."""
    program = _CEL.program(_CEL.compile(expression))
    activation = {
        "object": celpy.json_to_cel(obj), "oldObject": celpy.json_to_cel(old),
        "request": celpy.json_to_cel({"operation": operation}),
    }
    return bool(program.evaluate(activation))


# --- RBAC and pods ------------------------------------------------------------------------------

def check_rbac(objs: list[dict], wiring: Wiring, service_account: str) -> None:
    assert not by_kind(objs, "Role") and not by_kind(objs, "RoleBinding")
    role = one(objs, "ClusterRole")
    granted = {
        (group, resource, frozenset(rule["verbs"]))
        for rule in role["rules"] for group in rule["apiGroups"] for resource in rule["resources"]
    }
    assert granted == EXPECTED_RBAC
    assert all("resourceNames" not in r and "nonResourceURLs" not in r for r in role["rules"])
    binding = one(objs, "ClusterRoleBinding")
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                  "name": role["metadata"]["name"]}
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": service_account, "namespace": wiring.namespace}]
    assert one(objs, "ServiceAccount")["metadata"]["name"] == service_account


def check_deployment(objs: list[dict], wiring: Wiring, replicas: int = 3) -> dict:
    deploy = one(objs, "Deployment")
    assert deploy["metadata"]["namespace"] == wiring.namespace
    assert deploy["spec"]["replicas"] == replicas
    pod = deploy["spec"]["template"]["spec"]
    pod_labels = deploy["spec"]["template"]["metadata"]["labels"]
    assert selector_matches(deploy["spec"]["selector"], pod_labels)

    psc = pod["securityContext"]
    assert psc["runAsNonRoot"] is True and psc["runAsUser"] > 0
    assert psc.get("seccompProfile") == {"type": "RuntimeDefault"}
    (container,) = pod["containers"]
    sc = container["securityContext"]
    assert sc.get("allowPrivilegeEscalation") is False
    assert sc.get("readOnlyRootFilesystem") is True
    assert sc.get("capabilities") == {"drop": ["ALL"]}
    assert sc.get("seccompProfile") == {"type": "RuntimeDefault"}
    assert not sc.get("privileged")

    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports["https"] == 8443
    for probe, path in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz"), ("startupProbe", "/healthz")):
        get = container[probe]["httpGet"]
        assert (get["path"], get["scheme"], get["port"]) == (path, "HTTPS", "https"), probe
    args = container["args"]
    assert any(a.startswith("--tls-cert=/etc/instancetype-webhook/tls/") for a in args)
    assert any(a.startswith("--tls-key=/etc/instancetype-webhook/tls/") for a in args)
    assert "--port=8443" in args and any(a.startswith("--tls-min-version=1.") for a in args)
    assert ("--in-cluster" in args) != any(a.startswith("--catalog=") for a in args), "one reference source"

    tls_mount = [m for m in container["volumeMounts"] if m["mountPath"] == "/etc/instancetype-webhook/tls"]
    assert tls_mount and tls_mount[0]["readOnly"] is True
    (volume,) = [v for v in pod["volumes"] if v["name"] == tls_mount[0]["name"]]
    assert volume["secret"]["defaultMode"] & 0o007 == 0, "the key must not be world-readable"

    anti = pod["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0]
    assert anti["podAffinityTerm"]["topologyKey"] == "kubernetes.io/hostname"
    assert selector_matches(anti["podAffinityTerm"]["labelSelector"], pod_labels)

    service = one(objs, "Service")
    assert service["metadata"]["name"] == wiring.service
    assert selector_matches({"matchLabels": service["spec"]["selector"]}, pod_labels)
    (https,) = [p for p in service["spec"]["ports"] if p["name"] == "https"]
    assert (https["port"], https["targetPort"]) == (wiring.service_port, "https")

    pdb = one(objs, "PodDisruptionBudget")
    assert selector_matches(pdb["spec"]["selector"], pod_labels)
    assert pdb["spec"].get("maxUnavailable", 0) < replicas or pdb["spec"].get("minAvailable", 0) >= 1
    return volume


READ = frozenset({"get", "list", "watch"})


def permissions(objs: list[dict], account: str, namespace: str) -> set[tuple[str, str, str]]:
    """(apiGroup, resource, verb) the ServiceAccount gets through every (Cluster)RoleBinding naming it."""
    roles = {(o["kind"], o["metadata"]["name"]): o for o in objs if o["kind"] in ("Role", "ClusterRole")}
    granted = set()
    for binding in [*by_kind(objs, "ClusterRoleBinding"), *by_kind(objs, "RoleBinding")]:
        if {"kind": "ServiceAccount", "name": account, "namespace": namespace} not in binding["subjects"]:
            continue
        role = roles[(binding["roleRef"]["kind"], binding["roleRef"]["name"])]
        for rule in role["rules"]:
            assert "resourceNames" not in rule and "*" not in rule["verbs"] and "*" not in rule["resources"]
            granted |= {(g, r, v) for g in rule["apiGroups"] for r in rule["resources"] for v in rule["verbs"]}
    return granted
