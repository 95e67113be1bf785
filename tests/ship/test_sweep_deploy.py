"""The sweep as deployed: the chart's CronJob, post-install/upgrade Job and Indexed Job option (real Helm
engine), webhook_config/sweep (real kustomize), and their RBAC: the sweep's ServiceAccount may write
nothing but patch/update on virtualmachines (and, with sweep.events, create/update on events), the
webhook's stays read-only."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import helm_python as helm
import pytest
import yaml

from instancetype_webhook.cli import build_parser
from instancetype_webhook.fleet.selection import Shard
from tests.kit.chart import CHART, FULLNAME, NAMESPACE, RELEASE, install
from tests.kit.needs import need_command
from tests.kit.ship_checks import READ, by_kind, check_schemas, load_documents, permissions

ROOT = Path(__file__).resolve().parents[2]
SWEEP_SA = f"{FULLNAME}-sweep"
ON = {"policy": "expandAll", "sweep": {"enabled": True}}


def hooks(values: dict) -> list[dict]:
    """The hook manifests (not part of an install's manifest), rendered offline by Helm."""
    chart = helm.Chart.load(str(CHART))
    try:
        rendered = chart.render(values, name=RELEASE, namespace=NAMESPACE, is_install=True)
    finally:
        chart.close()
    docs = load_documents("\n---\n".join(text for path, text in rendered.items() if path.endswith(".yaml")))
    return [d for d in docs if "helm.sh/hook" in (d["metadata"].get("annotations") or {})]


def check_accounts(objs: list[dict], sweep_sa: str, webhook_sa: str, namespace: str, events: bool = False) -> None:
    sweep = permissions(objs, sweep_sa, namespace)
    writes = {("kubevirt.io", "virtualmachines", "patch"), ("kubevirt.io", "virtualmachines", "update")}
    if events:  # sweep --events: Events only, found again by name (get) to extend a series
        writes |= {("events.k8s.io", "events", "create"), ("events.k8s.io", "events", "update")}
    assert {p for p in sweep if p[2] not in READ} == writes
    assert {("kubevirt.io", "virtualmachines", "list"), ("kubevirt.io", "virtualmachines", "get"),
            ("instancetype.kubevirt.io", "virtualmachineclusterinstancetypes", "list")} <= sweep
    webhook = permissions(objs, webhook_sa, namespace)
    assert webhook and all(verb in READ for _, _, verb in webhook)  # read-only
    assert not any(resource == "virtualmachines" for _, resource, _ in webhook)


def sweep_args(job_spec: dict) -> list[str]:
    (container,) = job_spec["template"]["spec"]["containers"]
    assert container["command"] == ["instancetype-webhook", "sweep"]
    return container["args"]


def test_off_by_default():
    objs, _ = install()
    assert not by_kind(objs, "CronJob") and not hooks({})
    assert all(o["metadata"]["labels"].get("app.kubernetes.io/component") != "sweep" for o in objs)


def test_cronjob_hook_job_and_rbac():
    objs, _ = install(ON)
    (cron,) = by_kind(objs, "CronJob")
    (hook,) = hooks(ON)
    assert check_schemas([*objs, hook]) == []
    assert hook["metadata"]["annotations"]["helm.sh/hook"] == "post-install,post-upgrade"
    for spec in (cron["spec"]["jobTemplate"]["spec"], hook["spec"]):
        assert "completionMode" not in spec
        pod = spec["template"]["spec"]
        assert pod["serviceAccountName"] == SWEEP_SA and pod["restartPolicy"] == "Never"
        args = sweep_args(spec)
        assert {"--in-cluster", "--all-namespaces", "--policy=expandAll", "--output=json"} <= set(args)
        parsed = build_parser().parse_args(["sweep", *args])  # the CLI accepts what the chart passes
        assert parsed.func and parsed.policy == "expandAll" and parsed.all_namespaces
        rule = spec["podFailurePolicy"]["rules"][0]
        assert rule["action"] == "FailJob" and rule["onExitCodes"]["values"] == [1]
    assert cron["spec"]["concurrencyPolicy"] == "Forbid"
    assert "--events" in sweep_args(cron["spec"]["jobTemplate"]["spec"])
    check_accounts(objs, SWEEP_SA, FULLNAME, NAMESPACE, events=True)


def test_events_off_leaves_the_vm_writes_only():
    values = {"policy": "expandAll", "sweep": {"enabled": True, "events": False}}
    objs, _ = install(values)
    (cron,) = by_kind(objs, "CronJob")
    assert "--events" not in sweep_args(cron["spec"]["jobTemplate"]["spec"])
    check_accounts(objs, SWEEP_SA, FULLNAME, NAMESPACE)


def test_indexed_job_with_the_shard_count():
    values = {"policy": "expand", "sweep": {"enabled": True, "shards": 4, "schedule": "", "dryRun": True}}
    objs, _ = install(values)
    assert not by_kind(objs, "CronJob")  # no schedule: the hook Job only
    (hook,) = hooks(values)
    spec = hook["spec"]
    assert (spec["completionMode"], spec["completions"], spec["parallelism"]) == ("Indexed", 4, 4)
    args = sweep_args(spec)
    assert "--shard=job/4" in args and "--dry-run" in args and "--policy=expand" in args
    shard_arg = next(a for a in args if a.startswith("--shard="))
    shards = [Shard.parse(shard_arg.split("=", 1)[1], {"JOB_COMPLETION_INDEX": str(i)}) for i in range(4)]
    names = [f"vm-{i}" for i in range(200)]
    owners = [[s.holds("ns", n) for s in shards].count(True) for n in names]
    assert owners == [1] * 200  # every VM in exactly one shard
    assert check_schemas([*objs, hook]) == []


def test_rbac_with_namespace_labels_stays_within_bounds():
    objs, _ = install({**ON, "rbac": {"readNamespaces": True}})
    check_accounts(objs, SWEEP_SA, FULLNAME, NAMESPACE, events=True)
    assert ("", "namespaces", "list") in permissions(objs, SWEEP_SA, NAMESPACE)  # decides as the webhook does


@pytest.mark.parametrize("values,message", [
    ({"sweep": {"enabled": True}}, "sweep.enabled needs policy (or sweep.policy) expand or expandAll"),
    ({"policy": "expandAll", "sweep": {"enabled": True, "shards": 0}}, "/sweep/shards"),
])
def test_bad_sweep_values_fail_clearly(values, message):
    with pytest.raises(helm.HelmError) as err:
        install(values)
    assert message in str(err.value)


def test_helm_lint_with_the_sweep():
    report = helm.lint(str(CHART), {**ON, "sweep": {"enabled": True, "shards": 3}}, strict=True, namespace=NAMESPACE)
    assert report["errors"] == []


def test_webhook_config_sweep_component(tmp_path: Path):
    kubectl = need_command("kubectl", "kubectl >= 1.21 (built-in kustomize) on PATH")
    work = tmp_path / "webhook_config"
    shutil.copytree(ROOT / "webhook_config", work, ignore=shutil.ignore_patterns("tls"))
    (work / "tls").mkdir()
    for name in ("tls.crt", "tls.key", "ca.crt"):
        (work / "tls" / name).write_text("placeholder\n")
    config = yaml.safe_load((work / "kustomization.yaml").read_text())
    config["components"] = ["sweep"]
    (work / "kustomization.yaml").write_text(yaml.safe_dump(config))
    built = subprocess.run([kubectl, "kustomize", str(work)], capture_output=True, text=True, check=True)
    objs = load_documents(built.stdout)
    (cron,) = by_kind(objs, "CronJob")
    spec = cron["spec"]["jobTemplate"]["spec"]
    assert spec["template"]["spec"]["containers"][0]["image"] == "instancetype-webhook:0.1.0"
    assert build_parser().parse_args(["sweep", *sweep_args(spec)]).policy == "expandAll"
    check_accounts(objs, "instancetype-webhook-sweep", "instancetype-webhook", "instancetype-webhook")
    assert check_schemas([o for o in objs if o["kind"] != "Secret"]) == []


def test_notes_point_at_the_sweep_or_the_audit():
    _, notes = install(ON)
    assert f"CronJob {SWEEP_SA}" in notes and f"logs job/{SWEEP_SA}-1" in notes
    _, notes = install({"policy": "expand"})
    assert "instancetype-webhook audit -A --policy expand" in notes
    _, notes = install()
    assert "audit" not in notes
