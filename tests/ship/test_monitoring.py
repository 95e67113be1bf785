"""The chart's alerts and dashboard (real Helm engine), checked by the real `promtool` (Debian's
prometheus package): the rules load, each alert fires on the series it is about and stays quiet on
healthy ones (`promtool test rules`), every dashboard query parses, and every metric name the rules
and the dashboard use is in the real /metrics of a running server."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import helm_python as helm
import httpx
import orjson
import pytest
import yaml

from tests.kit.builders import review
from tests.kit.chart import CHART, FULLNAME, NAMESPACE, install
from tests.kit.needs import need_command
from tests.kit.server import serve
from tests.kit.ship_checks import by_kind, check_schemas

ON = {"metrics": {"prometheusRule": {"enabled": True, "labels": {"release": "kube-prometheus-stack"}},
                  "dashboard": {"enabled": True}}}
PROMTOOL = "promtool (Debian: apt-get install prometheus)"
SEL = f'job="{FULLNAME}", namespace="{NAMESPACE}"'
POD = f'{SEL}, pod="p1"'
METRIC = re.compile(r"\b(instancetype_webhook_[a-z_]+)\b")
HOOKS = 'name=~".+\\\\.instancetype-webhook\\\\.io"'  # the API server's alerts: this chart's webhooks
MUTATE = 'name="virtualmachines.mutate.instancetype-webhook.io"'
APISERVER_ALERTS = {"InstancetypeWebhookCallsFailing", "InstancetypeWebhookFailOpen",
                    "InstancetypeWebhookAPIServerLatencyHigh"}


@pytest.fixture(scope="module")
def rendered() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    objs, _ = install(ON)
    (rule,) = by_kind(objs, "PrometheusRule")
    (config_map,) = [o for o in by_kind(objs, "ConfigMap") if o["metadata"]["name"].endswith("-dashboard")]
    return rule, config_map, json.loads(config_map["data"]["instancetype-webhook.json"])


def rules(rule: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["alert"]: r for group in rule["spec"]["groups"] for r in group["rules"]}


def dashboard_queries(dashboard: dict[str, Any]) -> list[str]:
    exprs = [t["expr"] for panel in dashboard["panels"] for t in panel.get("targets", [])]
    for var in dashboard["templating"]["list"]:
        if var["type"] == "query":
            exprs.append(re.fullmatch(r"label_values\((.*), \w+\)", var["query"]["query"]).group(1))
    return exprs


def as_promql(expr: str) -> str:
    """A dashboard query as Prometheus sees it once Grafana has filled in its variables."""
    return expr.replace("$__rate_interval", "5m").replace("$namespace", ".+").replace("$job", ".+")


def test_off_by_default():
    objs, _ = install()
    assert not by_kind(objs, "PrometheusRule")
    assert not [o for o in by_kind(objs, "ConfigMap") if "grafana_dashboard" in o["metadata"].get("labels", {})]


def test_rendered_objects(rendered):
    rule, config_map, dashboard = rendered
    assert rule["metadata"]["namespace"] == NAMESPACE
    assert rule["metadata"]["labels"]["release"] == "kube-prometheus-stack"
    assert set(rules(rule)) == {"InstancetypeWebhookDown", "InstancetypeWebhookNotReady", "InstancetypeWebhookErrors",
                                "InstancetypeWebhookLatencyHigh", "InstancetypeWebhookDenialsRising",
                                "InstancetypeWebhookReferenceCacheNotSynced", "InstancetypeWebhookCertificateExpiring",
                                *APISERVER_ALERTS}
    for name, alert in rules(rule).items():
        assert alert["labels"]["severity"] in ("critical", "warning") and alert["annotations"]["summary"]
        assert (HOOKS if name in APISERVER_ALERTS else SEL) in alert["expr"]  # only this chart's webhook
    assert check_schemas([config_map]) == []
    assert config_map["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert dashboard["uid"] == "instancetype-webhook"
    titles = {p["title"] for p in dashboard["panels"]}
    assert {"Requests by outcome", "Latency percentiles", "Denials by reason", "Reference cache objects", "Workers",
            "Certificate expires in"} <= titles


def test_values_shape_the_rules():
    objs, _ = install({"webhook": {"timeoutSeconds": 20}, "metrics": {"prometheusRule": {
        "enabled": True, "certificateExpiryDays": 30, "latencyTimeoutRatio": 0.5, "runbookUrl": "https://runbooks/",
        "additionalLabels": {"team": "virt"}}}})
    got = rules(by_kind(objs, "PrometheusRule")[0])
    assert got["InstancetypeWebhookLatencyHigh"]["expr"].rstrip().endswith("> 10")
    assert got["InstancetypeWebhookCertificateExpiring"]["expr"].rstrip().endswith(f"< {30 * 86400}")
    assert got["InstancetypeWebhookDown"]["annotations"]["runbook_url"] == "https://runbooks/instancetypewebhookdown"
    assert all(r["labels"]["team"] == "virt" for r in got.values())


def test_dashboard_namespace_and_annotations():
    objs, _ = install({"metrics": {"dashboard": {"enabled": True, "namespace": "monitoring",
                                                 "annotations": {"grafana_folder": "KubeVirt"}}}})
    (cm,) = [o for o in by_kind(objs, "ConfigMap") if o["metadata"]["name"].endswith("-dashboard")]
    assert cm["metadata"]["namespace"] == "monitoring"
    assert cm["metadata"]["annotations"] == {"grafana_folder": "KubeVirt"}


def test_promtool_checks_the_rules_and_the_dashboard_queries(rendered, tmp_path: Path):
    promtool = need_command("promtool", PROMTOOL)
    rule, _, dashboard = rendered
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump({"groups": rule["spec"]["groups"]}))
    checked = subprocess.run([promtool, "check", "rules", str(tmp_path / "rules.yaml")], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "SUCCESS: 10 rules found" in checked.stdout
    queries = [{"record": f"dashboard:query{i}", "expr": as_promql(e)}
               for i, e in enumerate(dashboard_queries(dashboard))]
    (tmp_path / "dashboard.yaml").write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": queries}]}))
    checked = subprocess.run([promtool, "check", "rules", str(tmp_path / "dashboard.yaml")],
                             capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def counter(rate_per_minute: float, minutes: int = 60) -> str:
    return f"0+{rate_per_minute:g}x{minutes}"


def histogram(low: float, high: float, per_minute: int) -> list[dict[str, str]]:
    """Every observation between `low` and `high` seconds (buckets 0.01, 5, 10, +Inf)."""
    out = []
    for le in ("0.01", "5.0", "10.0", "+Inf"):
        inside = float(le) >= high if le != "+Inf" else True
        out.append({"series": f'instancetype_webhook_request_duration_seconds_bucket{{{POD}, endpoint="mutate", '
                              f'le="{le}"}}', "values": counter(per_minute if inside else 0)})
    return out


def apiserver_histogram(per_minute: int, slow: bool) -> list[dict[str, str]]:
    """The API server's webhook latency histogram (its buckets 0.1, 2.5, 10, +Inf): every call between 2.5
    and 10 s (`slow`) or under 0.1 s."""
    out = []
    for le in ("0.1", "2.5", "10", "+Inf"):
        inside = le in ("10", "+Inf") or not slow
        out.append({"series": f'apiserver_admission_webhook_admission_duration_seconds_bucket{{{MUTATE}, '
                              f'type="admit", operation="CREATE", rejected="false", le="{le}"}}',
                    "values": counter(per_minute if inside else 0)})
    return out


REJECTED = f'apiserver_admission_webhook_rejection_count{{{MUTATE}, type="admit", operation="CREATE"'


# alert -> (series where it fires, eval time, $labels, $value as the annotation shows it), (series where it does not)
CASES: dict[str, tuple[list[dict[str, str]], str, dict[str, str], str, list[dict[str, str]]]] = {
    "InstancetypeWebhookDown": (
        [{"series": f"up{{{POD}}}", "values": "0x20"}], "10m", {}, "",
        [{"series": f"up{{{POD}}}", "values": "1x20"}, {"series": f'up{{{SEL}, pod="p2"}}', "values": "0x20"}]),
    "InstancetypeWebhookNotReady": (
        [{"series": f"instancetype_webhook_ready{{{POD}}}", "values": "0x20"}], "10m",
        {"namespace": NAMESPACE, "pod": "p1"}, "",
        [{"series": f"instancetype_webhook_ready{{{POD}}}", "values": "0 0 0 1x20"}]),  # not ready for 3 minutes
    "InstancetypeWebhookErrors": (
        [{"series": f'instancetype_webhook_requests_total{{{POD}, outcome="allowed"}}', "values": counter(100)},
         {"series": f'instancetype_webhook_errors_total{{{POD}, reason="deadline"}}', "values": counter(10)}],
        "30m", {}, "10%",
        [{"series": f'instancetype_webhook_requests_total{{{POD}, outcome="allowed"}}', "values": counter(100)},
         {"series": f'instancetype_webhook_errors_total{{{POD}, reason="deadline"}}', "values": counter(1)}]),
    "InstancetypeWebhookLatencyHigh": (
        histogram(5, 10, 60), "30m", {"endpoint": "mutate"}, "9.95s", histogram(0, 0.01, 60)),
    "InstancetypeWebhookDenialsRising": (
        [{"series": f'instancetype_webhook_requests_total{{{POD}, outcome="allowed"}}', "values": counter(60)},
         {"series": f'instancetype_webhook_requests_total{{{POD}, outcome="denied"}}', "values": counter(30)}],
        "45m", {}, "33.33%",
        # a few denials only (one every two minutes): a high share, but not a rise worth a page
        [{"series": f'instancetype_webhook_requests_total{{{POD}, outcome="denied"}}', "values": counter(0.5)}]),
    "InstancetypeWebhookReferenceCacheNotSynced": (
        [{"series": f"instancetype_webhook_reference_cache_synced{{{POD}}}", "values": "0x20"}], "15m",
        {"namespace": NAMESPACE, "pod": "p1"}, "",
        [{"series": f"instancetype_webhook_reference_cache_synced{{{POD}}}", "values": "1x20"}]),
    "InstancetypeWebhookCertificateExpiring": (  # promtool's clock starts at 0: the value is the time left
        [{"series": f"instancetype_webhook_tls_certificate_not_after_timestamp_seconds{{{POD}}}",
          "values": f"{10 * 86400}x40"}], "30m", {"namespace": NAMESPACE, "pod": "p1"}, "9d 23h 30m 0s",
        [{"series": f"instancetype_webhook_tls_certificate_not_after_timestamp_seconds{{{POD}}}",
          "values": f"{30 * 86400}x40"}]),
    "InstancetypeWebhookCallsFailing": (  # x509: certificate signed by unknown authority, 30 a minute
        [{"series": f'{REJECTED}, error_type="calling_webhook_error", rejection_code="500"}}', "values": counter(30)}],
        "15m", {"name": "virtualmachines.mutate.instancetype-webhook.io"}, "500m",
        # denials the webhook answered, and another webhook's failures: not this alert
        [{"series": f'{REJECTED}, error_type="no_error", rejection_code="422"}}', "values": counter(30)},
         {"series": 'apiserver_admission_webhook_rejection_count{name="other.example.io", type="admit", '
                    'operation="CREATE", error_type="calling_webhook_error", rejection_code="500"}',
          "values": counter(30)}]),
    "InstancetypeWebhookFailOpen": (
        [{"series": f'apiserver_admission_webhook_fail_open_count{{{MUTATE}, type="admit"}}', "values": counter(6)}],
        "15m", {"name": "virtualmachines.mutate.instancetype-webhook.io"}, "100m",
        [{"series": f'apiserver_admission_webhook_fail_open_count{{{MUTATE}, type="admit"}}', "values": "0x60"}]),
    "InstancetypeWebhookAPIServerLatencyHigh": (
        apiserver_histogram(60, slow=True), "30m", {"name": "virtualmachines.mutate.instancetype-webhook.io"},
        "9.925s", apiserver_histogram(60, slow=False)),
}


def expected_annotations(template: dict[str, str], labels: dict[str, str], value: str) -> dict[str, str]:
    out = {}
    for key, text in template.items():
        text = re.sub(r"\{\{ \$value \| humanize\w* \}\}", value, text)
        out[key] = re.sub(r"\{\{ \$labels\.(\w+) \}\}", lambda m: labels[m.group(1)], text)
    return out


def test_promtool_unit_tests_fire_and_do_not_fire_each_alert(rendered, tmp_path: Path):
    promtool = need_command("promtool", PROMTOOL)
    rule, _, _ = rendered
    alerts = rules(rule)
    assert set(CASES) == set(alerts)
    tests = []
    for name, (firing, at, labels, value, quiet) in CASES.items():
        alert = alerts[name]
        exp = {"exp_labels": {**alert["labels"], **labels},
               "exp_annotations": expected_annotations(alert["annotations"], labels, value)}
        tests.append({"interval": "1m", "input_series": firing,
                      "alert_rule_test": [{"eval_time": at, "alertname": name, "exp_alerts": [exp]},
                                          {"eval_time": "1m", "alertname": name, "exp_alerts": []}]})  # not yet: `for`
        tests.append({"interval": "1m", "input_series": quiet,
                      "alert_rule_test": [{"eval_time": at, "alertname": name, "exp_alerts": []}]})
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump({"groups": rule["spec"]["groups"]}))
    (tmp_path / "tests.yaml").write_text(yaml.safe_dump({"rule_files": ["rules.yaml"], "evaluation_interval": "1m",
                                                         "tests": tests}, width=1000))
    ran = subprocess.run([promtool, "test", "rules", "tests.yaml"], cwd=tmp_path, capture_output=True, text=True)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "SUCCESS" in ran.stdout + ran.stderr


def scrape_after_traffic(tmp_path: Path) -> str:
    """/metrics of a real server that has answered an allowed, a denied and a malformed review."""
    vm = {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "metadata": {"name": "a", "namespace": "default"},
          "spec": {"instancetype": {"name": "nope"}, "template": {"spec": {"domain": {}}}}}
    env = {"INSTANCETYPE_WEBHOOK_METRICS_HOST": "127.0.0.1"}
    with serve(tmp_path, "--policy", "expand", env=env) as server, server.client() as client:
        assert client.post("/validate", content=orjson.dumps(review(vm))).json()["response"]["allowed"]
        assert not client.post("/mutate", content=orjson.dumps(review(vm))).json()["response"]["allowed"]
        assert client.post("/mutate", content=b"{").status_code == 400
        return httpx.get(server.metrics_url + "/metrics", timeout=5).text


def test_every_metric_the_rules_and_dashboard_use_is_served(rendered, tmp_path: Path):
    rule, _, dashboard = rendered
    used = set()
    for expr in [r["expr"] for r in rules(rule).values()] + dashboard_queries(dashboard):
        used |= set(METRIC.findall(expr))
    assert {"instancetype_webhook_tls_certificate_not_after_timestamp_seconds", "instancetype_webhook_denials_total",
            "instancetype_webhook_reference_cache_objects", "instancetype_webhook_workers"} <= used
    text = scrape_after_traffic(tmp_path)
    served = {line.split("{")[0].split(" ")[0] for line in text.splitlines() if line and not line.startswith("#")}
    assert used - served == set(), f"used by the rules or dashboard but not on /metrics: {sorted(used - served)}"


def test_helm_lint_with_everything_on():
    values = {**ON, "policy": "expandAll", "sweep": {"enabled": True}, "audit": {"enabled": True},
              "metrics": {**ON["metrics"], "serviceMonitor": {"enabled": True}}}
    report = helm.lint(str(CHART), values, strict=True, namespace=NAMESPACE)
    assert report["errors"] == []
    assert [m for m in report["messages"] if m["severity"] >= 2] == []


def test_the_api_server_alerts_can_be_turned_off_alone():
    objs, _ = install({"metrics": {"prometheusRule": {"enabled": True, "apiServer": {"enabled": False}}}})
    assert APISERVER_ALERTS.isdisjoint(rules(by_kind(objs, "PrometheusRule")[0]))
    objs, _ = install({"metrics": {"prometheusRule": {"enabled": True, "apiServer": {"failingPerSecond": 0.5}}}})
    assert rules(by_kind(objs, "PrometheusRule")[0])["InstancetypeWebhookCallsFailing"]["expr"].endswith("> 0.5")
