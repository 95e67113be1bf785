"""instancetype_webhook.fleet.finding: one stored VM judged by /mutate's own function, offline (bundled catalogue)."""
from __future__ import annotations

from instancetype_webhook.admission.context import ReviewContext
from instancetype_webhook.admission.policy import POLICY_KEY
from instancetype_webhook.fleet.finding import assess
from instancetype_webhook.sources.catalog import load_catalog
from tests.kit.fleet_cluster import vm

SOURCE = load_catalog()


def ctx(policy: str = "expandAll", **kw) -> ReviewContext:
    return ReviewContext(source=SOURCE, policy=policy, **kw)


def test_flatten_reports_ops_and_fields_without_status():
    stored = {**vm("web", "apps", "u1.medium", "fedora"), "status": {"printableStatus": "Stopped"}}
    finding, answer = assess(stored, ctx())
    assert finding.action == "flatten" and finding.ops == len(answer.ops) > 3
    assert "/spec/instancetype" in finding.fields and "/spec/preference" in finding.fields
    assert not any(f.startswith("/status") for f in finding.fields)
    assert answer.flat is not None and "instancetype" not in answer.flat["spec"]


def test_refuse_unresolved_skip_unchanged():
    refused, _ = assess(vm("w", "apps", "u1.small", "windows.11"), ctx())
    assert refused.action == "refuse" and refused.causes and refused.causes[0]["field"] == "spec.instancetype"
    assert refused.reason == refused.causes[0]["message"]
    missing, _ = assess(vm("m", "apps", "gone", None), ctx())
    assert missing.action == "unresolved" and '"gone" not found' in missing.reason and missing.causes == []
    captured = {**vm("c", "apps", "u1.small", None),
                "status": {"instancetypeRef": {"name": "u1.small", "controllerRevisionRef": {"name": "c-rev"}}}}
    skipped, _ = assess(captured, ctx("expand"))
    assert skipped.action == "skip" and skipped.reason == "stored VM references revision c-rev"
    kept, _ = assess(vm("k", "apps"), ctx("reference"))
    assert kept.action == "skip" and kept.reason == "reference policy keeps matchers"
    plain, answer = assess(vm("p", "apps", None, None), ctx())
    assert plain.action == "unchanged" and answer is None


def test_the_vm_annotation_follows_the_admins_switch():
    opted = vm("o", "apps", "u1.small", None)
    opted["metadata"]["annotations"][POLICY_KEY] = "reference"
    ignored, _ = assess(opted, ctx())
    assert ignored.action == "flatten" and "annotation ignored" in ignored.warnings[0]
    honoured, _ = assess(opted, ctx(vm_policy_overrides=True))
    assert honoured.action == "skip" and honoured.policy == "reference"


def test_a_failing_lookup_is_reported_for_that_vm_only():
    from instancetype_webhook.sources.cluster import SourceUnavailable

    class Down:
        def get(self, *a, **k):
            raise SourceUnavailable("GET virtualmachineclusterinstancetypes u1.small: ReadTimeoutError")

        def get_revision(self, *a, **k):
            return None

    finding, answer = assess(vm("d", "apps", "u1.small", None), ReviewContext(source=Down(), policy="expandAll"))
    assert finding.action == "failed" and answer is None
    assert finding.reason == ("reference lookup failed: GET virtualmachineclusterinstancetypes u1.small: "
                              "ReadTimeoutError")


def test_a_running_vm_is_flattened_like_a_stopped_one_and_says_so():
    stopped, stopped_answer = assess(vm("r", "apps", "u1.medium", "fedora"), ctx())
    live = {**vm("r", "apps", "u1.medium", "fedora"), "status": {"created": True, "printableStatus": "Running"}}
    running, answer = assess(live, ctx())
    assert running.action == stopped.action == "flatten" and running.running and not stopped.running
    assert answer.flat["spec"] == stopped_answer.flat["spec"]  # the same flat spec
    assert running.warnings[-1].startswith("running: the VMI keeps running unchanged")
