"""charts/instancetype-webhook rendered by Helm's own Go engine (helm-python-sdk), offline."""
from __future__ import annotations

import base64

import helm_python as helm
import pytest
import yaml

from tests.kit.chart import CERT_MANAGER, CHART, FULLNAME, NAMESPACE, RELEASE, ROOT, WIRING, install
from tests.kit.ship_checks import (
    by_kind,
    check_ca,
    check_deployment,
    check_rbac,
    check_schemas,
    check_webhooks,
    webhooks,
)


@pytest.fixture(scope="module")
def default_install() -> tuple[list[dict], str]:
    return install()


@pytest.fixture(scope="module")
def cert_manager_install() -> tuple[list[dict], str]:
    return install(CERT_MANAGER)


@pytest.mark.parametrize("values,kube_version", [
    (None, None), (CERT_MANAGER, None), (None, "v1.29.0"),
    ({"metrics": {"serviceMonitor": {"enabled": True}}, "networkPolicy": {"enabled": True}}, None),
])
def test_helm_lint_is_clean(values, kube_version):
    report = helm.lint(str(CHART), values, strict=True, namespace=NAMESPACE, kube_version=kube_version)
    assert report["errors"] == []
    assert [m for m in report["messages"] if m["severity"] >= 2] == []  # only INFO (e.g. "icon is recommended")


def test_default_values_render_valid_objects_with_generated_certificates(default_install):
    objs, _notes = default_install
    assert check_schemas(objs) == []
    check_webhooks(objs, WIRING)
    check_rbac(objs, WIRING, service_account=FULLNAME)
    volume = check_deployment(objs, WIRING, replicas=3)
    assert check_ca(objs, WIRING) == "caBundle"  # and the serving certificate verifies against it
    (secret,) = by_kind(objs, "Secret")
    assert volume["secret"]["secretName"] == secret["metadata"]["name"]
    assert base64.b64decode(secret["data"]["ca.crt"]) == base64.b64decode(
        webhooks(objs)[0][2]["clientConfig"]["caBundle"])
    assert sorted(o["kind"] for o in objs) == sorted([
        "ClusterRole", "ClusterRoleBinding", "Deployment", "MutatingWebhookConfiguration", "PodDisruptionBudget",
        "Secret", "Service", "ServiceAccount", "ValidatingWebhookConfiguration",
    ])


def test_cert_manager_values_render_issuers_certificate_and_injection(cert_manager_install):
    objs, _notes = cert_manager_install
    assert sorted(check_schemas(objs)) == ["Certificate", "Certificate", "Issuer", "Issuer"]
    check_webhooks(objs, WIRING)
    check_rbac(objs, WIRING, service_account=FULLNAME)
    volume = check_deployment(objs, WIRING)
    assert check_ca(objs, WIRING) == "inject"
    assert by_kind(objs, "Secret") == []
    certs = {c["metadata"]["name"]: c["spec"] for c in by_kind(objs, "Certificate")}
    serving = certs[f"{FULLNAME}-serving"]
    assert serving["secretName"] == volume["secret"]["secretName"]
    assert serving["issuerRef"]["name"] == f"{FULLNAME}-ca"
    assert certs[f"{FULLNAME}-ca"]["isCA"] is True
    issuers = {i["metadata"]["name"]: i["spec"] for i in by_kind(objs, "Issuer")}
    assert issuers == {f"{FULLNAME}-selfsigned": {"selfSigned": {}},
                       f"{FULLNAME}-ca": {"ca": {"secretName": f"{FULLNAME}-ca"}}}
    for cfg in objs:
        if cfg["kind"].endswith("WebhookConfiguration"):
            assert cfg["metadata"]["annotations"]["cert-manager.io/inject-ca-from"] == f"{NAMESPACE}/{FULLNAME}-serving"


def test_cert_manager_with_an_existing_issuer():
    objs, _ = install({"tls": {"source": "cert-manager", "certManager": {
        "create": False, "issuerRef": {"name": "corp-ca", "kind": "ClusterIssuer"}}}})
    assert by_kind(objs, "Issuer") == []
    (cert,) = by_kind(objs, "Certificate")
    assert cert["spec"]["issuerRef"] == {"name": "corp-ca", "kind": "ClusterIssuer", "group": "cert-manager.io"}
    assert check_ca(objs, WIRING) == "inject"


def test_existing_secret_with_a_given_ca_bundle():
    bundle = base64.b64encode(b"-----BEGIN CERTIFICATE-----\n").decode()
    objs, _ = install({"tls": {"source": "secret", "existingSecret": "my-tls", "caBundle": bundle}})
    assert by_kind(objs, "Secret") == [] and by_kind(objs, "Certificate") == []
    volume = check_deployment(objs, WIRING)
    assert volume["secret"]["secretName"] == "my-tls"
    assert {h["clientConfig"]["caBundle"] for _k, _c, h in webhooks(objs)} == {bundle}


def test_optional_service_monitor_and_network_policy():
    objs, _ = install({"metrics": {"serviceMonitor": {"enabled": True, "labels": {"release": "prom"}}},
                       "networkPolicy": {"enabled": True, "apiServerCIDRs": ["10.0.0.1/32"]}})
    assert check_schemas(objs) == ["ServiceMonitor"]
    (monitor,) = by_kind(objs, "ServiceMonitor")
    assert monitor["metadata"]["labels"]["release"] == "prom"
    (service,) = by_kind(objs, "Service")
    assert monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    assert monitor["spec"]["endpoints"][0]["port"] in {p["name"] for p in service["spec"]["ports"]}
    (policy,) = by_kind(objs, "NetworkPolicy")
    assert policy["spec"]["policyTypes"] == ["Ingress", "Egress"]
    assert {p["port"] for rule in policy["spec"]["ingress"] for p in rule["ports"]} == {"https", "metrics"}
    assert policy["spec"]["egress"][0]["to"] == [{"ipBlock": {"cidr": "10.0.0.1/32"}}]


def test_values_reach_the_objects():
    objs, notes = install({
        "replicaCount": 5, "policy": "expand", "priorityClassName": "system-cluster-critical",
        "tls": {"minVersion": "1.3"}, "webhook": {"failurePolicy": "Ignore", "timeoutSeconds": 5,
                                                  "excludeNamespaces": ["legacy"]},
        "podDisruptionBudget": {"maxUnavailable": 2}, "podAntiAffinity": "hard",
        "image": {"repository": "registry.example/itw", "digest": "sha256:" + "a" * 64},
    })
    deploy = check_deployment_loosely(objs)
    pod = deploy["spec"]["template"]["spec"]
    assert deploy["spec"]["replicas"] == 5
    assert pod["priorityClassName"] == "system-cluster-critical"
    args = pod["containers"][0]["args"]
    assert "--policy=expand" in args and "--tls-min-version=1.3" in args
    assert pod["containers"][0]["image"] == "registry.example/itw@sha256:" + "a" * 64
    assert "requiredDuringSchedulingIgnoredDuringExecution" in pod["affinity"]["podAntiAffinity"]
    assert by_kind(objs, "PodDisruptionBudget")[0]["spec"]["maxUnavailable"] == 2
    for _k, _c, hook in webhooks(objs):
        assert (hook["failurePolicy"], hook["timeoutSeconds"]) == ("Ignore", 5)
        assert hook["namespaceSelector"]["matchExpressions"][0]["values"] == ["kube-system", NAMESPACE, "legacy"]
    assert "failurePolicy:   Ignore" in notes
    assert check_schemas(objs) == []


def test_autoscaling_is_off_by_default_and_when_on_owns_the_replica_count(default_install):
    objs, _ = default_install
    assert by_kind(objs, "HorizontalPodAutoscaler") == []
    objs, notes = install({"autoscaling": {"enabled": True, "minReplicas": 2, "maxReplicas": 8,
                                       "targetCPUUtilizationPercentage": 60,
                                       "behavior": {"scaleDown": {"stabilizationWindowSeconds": 600}}},
                       "resources": {"requests": {"cpu": "500m"}}})
    assert check_schemas(objs) == []
    (hpa,) = by_kind(objs, "HorizontalPodAutoscaler")
    deploy = check_deployment_loosely(objs)
    assert "replicas" not in deploy["spec"]  # an upgrade must not reset what the autoscaler chose
    assert hpa["apiVersion"] == "autoscaling/v2"
    assert hpa["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment",
                                             "name": deploy["metadata"]["name"]}
    assert (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]) == (2, 8)
    assert hpa["spec"]["metrics"] == [{"type": "Resource", "resource": {
        "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}}]
    assert hpa["spec"]["behavior"] == {"scaleDown": {"stabilizationWindowSeconds": 600}}
    assert by_kind(objs, "PodDisruptionBudget")[0]["spec"]["maxUnavailable"] == 1  # still bounds evictions
    assert "Keep autoscaling.minReplicas >= 2" in notes and "Keep replicaCount >= 2" in default_install[1]
    report = helm.lint(str(CHART), {"autoscaling": {"enabled": True}}, strict=True, namespace=NAMESPACE)
    assert report["errors"] == []


@pytest.mark.parametrize("values,message", [
    ({"minReplicas": 5, "maxReplicas": 3}, "minReplicas \\(5\\) must not exceed autoscaling.maxReplicas \\(3\\)"),
    ({"minReplicas": 1}, "minReplicas must be at least 2 with the PodDisruptionBudget"),
    ({"targetCPUUtilizationPercentage": 0}, "targetCPUUtilizationPercentage"),
    ({"maxReplica": 4}, "maxReplica"),
])
def test_autoscaling_values_that_cannot_work_fail(values, message):
    with pytest.raises(helm.HelmError, match=message):
        install({"autoscaling": {"enabled": True, **values}})


def test_autoscaling_needs_a_cpu_request():
    with pytest.raises(helm.HelmError, match="autoscaling needs resources.requests.cpu"):
        install({"autoscaling": {"enabled": True}, "resources": {"requests": {"cpu": None}}})
    objs, _ = install({"autoscaling": {"enabled": True, "minReplicas": 1}, "podDisruptionBudget": {"enabled": False}})
    assert by_kind(objs, "HorizontalPodAutoscaler")[0]["spec"]["minReplicas"] == 1


def test_log_allowed_reaches_the_environment_only_when_not_the_default(default_install):
    def env(objs: list[dict]) -> list[dict]:
        return check_deployment_loosely(objs)["spec"]["template"]["spec"]["containers"][0].get("env", [])

    assert env(default_install[0]) == []  # the server's default, 1 in 100
    extra = {"name": "TZ", "value": "UTC"}
    assert env(install({"logAllowed": 100, "extraEnv": [extra]})[0]) == [extra]
    objs, _ = install({"logAllowed": 1, "extraEnv": [extra]})
    assert env(objs) == [{"name": "INSTANCETYPE_WEBHOOK_LOG_ALLOWED", "value": "1"}, extra]
    assert env(install({"logAllowed": 0})[0]) == [{"name": "INSTANCETYPE_WEBHOOK_LOG_ALLOWED", "value": "0"}]
    assert check_schemas(objs) == []
    with pytest.raises(helm.HelmError, match="logAllowed"):
        install({"logAllowed": -1})


def test_start_grace_reaches_the_arguments_and_a_negative_one_is_refused(default_install):
    def args(objs: list[dict]) -> list[str]:
        return check_deployment_loosely(objs)["spec"]["template"]["spec"]["containers"][0]["args"]

    assert "--start-grace=60" in args(default_install[0])
    assert "--start-grace=15" in args(install({"startGrace": 15})[0])
    assert "--start-grace=0" in args(install({"startGrace": 0})[0])
    with pytest.raises(helm.HelmError, match="startGrace"):
        install({"startGrace": -1})
    with pytest.raises(helm.HelmError, match="startGrace"):
        install({"startGrace": "soon"})


def test_catalog_directory_replaces_the_cluster_source_and_namespaces_are_opt_in():
    objs, _ = install({"catalog": {"directory": "/catalog"}, "rbac": {"readNamespaces": True}})
    args = (check_deployment(objs, WIRING)
            and check_deployment_loosely(objs)["spec"]["template"]["spec"]["containers"][0]["args"])
    assert "--catalog=/catalog" in args and "--in-cluster" not in args
    (role,) = by_kind(objs, "ClusterRole")
    assert role["rules"][-1] == {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get", "list", "watch"]}
    with pytest.raises(AssertionError):
        check_rbac(objs, WIRING, service_account=FULLNAME)  # no longer the default least-privilege set


def check_deployment_loosely(objs: list[dict]) -> dict:
    (deploy,) = by_kind(objs, "Deployment")
    return deploy


@pytest.mark.parametrize("values,message", [
    ({"policy": "flatten"}, "/policy': value must be one of 'reference', 'expand', 'expandAll'"),
    ({"tls": {"minVersion": "1.1"}}, "/tls/minVersion': value must be one of '1.2', '1.3'"),
    ({"tls": {"source": "vault"}}, "/tls/source': value must be one of 'helm', 'cert-manager', 'secret'"),
    ({"tls": {"source": "secret"}}, "tls.caBundle is required"),
    ({"tls": {"source": "secret", "caBundle": "Zm9v"}}, "tls.existingSecret is required"),
    ({"tls": {"source": "cert-manager", "certManager": {"create": False}}}, "issuerRef.name is required"),
])
def test_bad_values_fail_with_a_clear_message(values, message):
    with pytest.raises(helm.HelmError, match=message):
        install(values)


def test_every_object_has_the_standard_labels(default_install, cert_manager_install):
    for objs in (default_install[0], cert_manager_install[0]):
        for obj in objs:
            labels = obj["metadata"]["labels"]
            assert labels["app.kubernetes.io/name"] == "instancetype-webhook"
            assert labels["app.kubernetes.io/instance"] == RELEASE
            assert labels["app.kubernetes.io/managed-by"] == "Helm"
            assert labels["app.kubernetes.io/version"] == "0.1.0"
            assert labels["helm.sh/chart"] == "instancetype-webhook-0.1.0"


def test_chart_and_plain_manifests_register_the_same_match_condition(default_install):
    plain = yaml.safe_load((ROOT / "webhook_config" / "mutatingwebhookconfiguration.yaml").read_text())
    (mutating,) = by_kind(default_install[0], "MutatingWebhookConfiguration")
    assert mutating["webhooks"][0]["matchConditions"] == plain["webhooks"][0]["matchConditions"]
    conditions = {h["name"]: h.get("matchConditions") for _k, _c, h in webhooks(default_install[0])}
    assert conditions["instancetypes.validate.instancetype-webhook.io"] is None


def test_generated_certificates_differ_per_install_but_agree_within_one(default_install):
    again, _ = install()
    first = by_kind(default_install[0], "Secret")[0]["data"]["ca.crt"]
    assert by_kind(again, "Secret")[0]["data"]["ca.crt"] != first
    assert check_ca(again, WIRING) == "caBundle"


def test_notes_tell_how_to_check_the_install(default_install, cert_manager_install):
    notes = default_install[1]
    assert f"kubectl -n {NAMESPACE} rollout status deployment/{FULLNAME}" in notes
    assert "failurePolicy is Fail" in notes
    assert f"get certificate {FULLNAME}-serving" in cert_manager_install[1]


def test_documented_rollout_set_flags_limit_the_webhook_to_the_labelled_namespace():
    from tests.kit.ship_checks import namespace_labels, selector_matches

    flags = ["webhook.failurePolicy=Ignore",
             "webhook.namespaceSelectorExpressions[0].key=instancetype-webhook/enabled",
             "webhook.namespaceSelectorExpressions[0].operator=In"]
    string_flag = "webhook.namespaceSelectorExpressions[0].values[0]=true"
    readme = (ROOT / "docs/install/rollout.md").read_text()
    for flag in flags:
        assert f"--set '{flag}'" in readme or f"--set {flag}" in readme
    assert f"--set-string '{string_flag}'" in readme
    values = helm.parse_set_string(",".join(flags))
    values["webhook"]["namespaceSelectorExpressions"][0].update(
        helm.parse_set_string_values(string_flag)["webhook"]["namespaceSelectorExpressions"][0])
    objs, _ = install(values)
    for _kind, _cfg, hook in webhooks(objs):
        selector = hook["namespaceSelector"]
        assert hook["failurePolicy"] == "Ignore"
        assert selector_matches(selector, {**namespace_labels("vm-test"), "instancetype-webhook/enabled": "true"})
        assert not selector_matches(selector, namespace_labels("prod"))
        assert not selector_matches(selector, {**namespace_labels(NAMESPACE), "instancetype-webhook/enabled": "true"})
    assert check_schemas(objs) == []


def test_selector_values_given_with_plain_set_stay_strings():
    values = helm.parse_set_string("webhook.namespaceSelectorExpressions[0].key=opt-in,"
                                   "webhook.namespaceSelectorExpressions[0].operator=In,"
                                   "webhook.namespaceSelectorExpressions[0].values[0]=true,"
                                   "webhook.namespaceSelectorExpressions[1].key=legacy,"
                                   "webhook.namespaceSelectorExpressions[1].operator=DoesNotExist")
    objs, _ = install(values)
    for _kind, _cfg, hook in webhooks(objs):
        assert hook["namespaceSelector"]["matchExpressions"][1:] == [
            {"key": "opt-in", "operator": "In", "values": ["true"]},
            {"key": "legacy", "operator": "DoesNotExist"},
        ]
    assert check_schemas(objs) == []


@pytest.mark.parametrize("values,where", [
    ({"webhook": {"failurePolicy": "Retry"}}, "failurePolicy"),
    ({"webhook": {"timeoutSeconds": 60}}, "timeoutSeconds"),
    ({"replicaCount": 0}, "replicaCount"),
    ({"podAntiAffinity": "maybe"}, "podAntiAffinity"),
])
def test_values_schema_rejects_values_kubernetes_would_refuse(values, where):
    with pytest.raises(helm.HelmError, match=where):
        install(values)


def test_tls_min_version_given_as_a_number_with_set_still_works():
    objs, _ = install(helm.parse_set_string("tls.minVersion=1.3"))
    args = check_deployment_loosely(objs)["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--tls-min-version=1.3" in args


def test_match_conditions_can_be_turned_off():
    objs, _ = install({"webhook": {"matchConditions": False}})
    assert {h.get("matchConditions") is None for _k, _c, h in webhooks(objs)} == {True}
    assert check_schemas(objs) == []


def test_vm_policy_override_is_off_unless_the_admin_turns_it_on(default_install):
    args = check_deployment_loosely(default_install[0])["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--allow-vm-policy" not in args
    objs, _ = install({"allowVMPolicyOverride": True})
    assert "--allow-vm-policy" in check_deployment_loosely(objs)["spec"]["template"]["spec"]["containers"][0]["args"]


def test_the_playground_is_never_on_in_the_chart(default_install, cert_manager_install):
    """The playground is mounted by `serve --dev` only: the chart runs `serve` with real TLS flags."""
    for objs, _ in (default_install, cert_manager_install):
        args = check_deployment_loosely(objs)["spec"]["template"]["spec"]["containers"][0]["args"]
        assert not any(a == "--dev" or a.startswith("--dev=") for a in args)
        assert any(a.startswith("--tls-cert") for a in args) and any(a.startswith("--tls-key") for a in args)


def test_cert_manager_ca_renewal_keeps_its_key_and_the_bundle_can_come_from_a_trust_bundle():
    objs, _ = install({**CERT_MANAGER, "tls": {**CERT_MANAGER["tls"], "certManager": {"caBundleSecret": "trust"}}})
    (ca,) = [c for c in by_kind(objs, "Certificate") if c["spec"].get("isCA")]
    assert ca["spec"]["privateKey"]["rotationPolicy"] == "Never"
    configs = [o for o in objs if o["kind"].endswith("WebhookConfiguration")]
    inject = {"cert-manager.io/inject-ca-from-secret": f"{NAMESPACE}/trust"}
    assert configs and all(o["metadata"]["annotations"] == inject for o in configs)
    assert all("caBundle" not in h["clientConfig"] for o in configs for h in o["webhooks"])
