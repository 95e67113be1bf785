"""The scheduled audit as deployed by the chart (real Helm engine): a CronJob running `audit --report`
that the CLI accepts, under a ServiceAccount that reads VMs and manages the chosen report kind only."""
from __future__ import annotations

import helm_python as helm
import pytest

from instancetype_webhook.cli import build_parser
from tests.kit.chart import FULLNAME, NAMESPACE, install
from tests.kit.ship_checks import READ, by_kind, check_schemas, permissions

AUDIT_SA = f"{FULLNAME}-audit"
REPORTS = {"policyreport": ("wgpolicyk8s.io", "policyreports"), "openreports": ("openreports.io", "reports")}


def audit_args(objs: list[dict]) -> list[str]:
    (cron,) = [c for c in by_kind(objs, "CronJob") if c["metadata"]["labels"]["app.kubernetes.io/component"] == "audit"]
    (container,) = cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"]
    assert container["command"] == ["instancetype-webhook", "audit"]
    assert cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]["serviceAccountName"] == AUDIT_SA
    return container["args"]


def test_off_by_default():
    objs, _ = install()
    assert all(o["metadata"].get("labels", {}).get("app.kubernetes.io/component") != "audit" for o in objs)


@pytest.mark.parametrize("report", ["policyreport", "openreports"])
def test_audit_cronjob_writes_reports_with_least_privilege(report):
    objs, _ = install({"audit": {"enabled": True, "report": report, "flattenResult": "fail"}})
    assert check_schemas(objs) == []  # every object valid against the Kubernetes schemas (strict)
    args = audit_args(objs)
    parsed = build_parser().parse_args(["audit", *args])
    assert (parsed.report, parsed.report_flatten, parsed.all_namespaces, parsed.in_cluster, parsed.exit_zero) == (
        report, "fail", True, True, True)
    assert parsed.policy == "expandAll" and parsed.shard is None
    granted = permissions(objs, AUDIT_SA, NAMESPACE)
    group, plural = REPORTS[report]
    assert {p for p in granted if p[2] not in READ} == {(group, plural, "create"), (group, plural, "update"),
                                                        (group, plural, "delete")}
    assert {(group, plural, "list"), (group, plural, "get"), ("kubevirt.io", "virtualmachines", "list"),
            ("instancetype.kubevirt.io", "virtualmachineclusterinstancetypes", "list")} <= granted
    assert ("kubevirt.io", "virtualmachines", "watch") not in granted


def test_audit_to_the_log_only_has_no_write_permission():
    objs, _ = install({"audit": {"enabled": True, "report": ""}})
    assert not any(a.startswith("--report") for a in audit_args(objs))
    assert {p for p in permissions(objs, AUDIT_SA, NAMESPACE) if p[2] not in READ} == set()


def test_a_bad_report_value_fails_clearly():
    with pytest.raises(helm.HelmError) as err:
        install({"audit": {"enabled": True, "report": "kyverno"}})
    assert "/audit/report" in str(err.value)
