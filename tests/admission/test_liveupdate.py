"""admission/liveupdate.py: live-update warnings of the mutating decision, in process. The VM runs (status,
revisions, VMI as virt-controller leaves them: tests/kit/live_source.py start_running); an UPDATE that resizes
it says what KubeVirt will do, read from the VMI on demand; a CREATE, an UPDATE that leaves the template and
the matchers alone, or a VM that is not running never reads the VMI; what cannot be read in time is said,
not guessed. (Was tests/server/test_liveupdate_webhook.py, over uvicorn and the fake API server.)"""
from __future__ import annotations

import copy
from typing import Any

import pytest

from instancetype_webhook.admission.context import ReviewContext
from instancetype_webhook.admission.liveupdate import is_running, live_update_warnings
from instancetype_webhook.kubevirt.liveupdate import merge_patch
from instancetype_webhook.kubevirt.source import InMemorySource
from instancetype_webhook.sources.catalog import load_catalog
from instancetype_webhook.sources.cluster import SourceUnavailable
from tests.kit.admission import WEB, post, stored
from tests.kit.builders import review
from tests.kit.live_source import RunningSource, start_running

SIZE = {"u1.large": {"spec": {"instancetype": {"name": "u1.large"}}}}


def cluster(policy: str = "reference") -> tuple[RunningSource, ReviewContext]:
    source = RunningSource(load_catalog(default_namespace="apps").objects(), default_namespace="apps")
    return source, ReviewContext(source=source, policy=policy)


def write(ctx: ReviewContext, obj: dict[str, Any], old: dict[str, Any] | None = None) -> tuple[dict, list[str]]:
    """/mutate for a CREATE (or an UPDATE of `old`): the VM stored and the warnings."""
    resp = post(ctx, "/mutate", review(obj, "UPDATE" if old is not None else "CREATE", old=old))
    return stored(obj, resp), resp.get("warnings", [])


def patched(ctx: ReviewContext, running: dict[str, Any], patch: dict[str, Any]) -> list[str]:
    """The warnings of `kubectl patch --type merge` of the running VM."""
    return write(ctx, merge_patch(running, patch), old=running)[1]


def test_resize_of_a_running_vm_warns_what_goes_live() -> None:
    source, ctx = cluster()
    created, warnings = write(ctx, WEB)
    assert warnings == [] and source.vmi_gets == 0  # a CREATE never reads a VMI
    running = start_running(source, created)
    assert patched(ctx, running, {"spec": {"instancetype": {"name": "u1.large"}}}) == [
        "live update: CPU sockets 1 -> 2 will be hot-plugged",
        "live update: guest memory 4Gi -> 8Gi will be hot-plugged"]
    assert source.vmi_gets == 1


def test_restart_and_refusal_are_said_with_upstreams_messages() -> None:
    source, ctx = cluster()
    running = start_running(source, write(ctx, WEB)[0])
    assert patched(ctx, running, {"spec": {"instancetype": {"name": "u1.small"}}}) == [
        "live update: needs a restart: memory updated in template spec to a value lower than what the VM started with"]
    assert patched(ctx, running, {"spec": {"instancetype": {"name": "cx1.large"}}}) == [
        "live update: needs a restart: a non-live-updatable field was changed in the template spec"]


def test_updates_that_leave_the_template_alone_make_no_lookup() -> None:
    source, ctx = cluster()
    running = start_running(source, write(ctx, WEB)[0])
    assert patched(ctx, running, {"metadata": {"labels": {"team": "a"}}}) == []
    assert patched(ctx, running, {"spec": {"runStrategy": "Manual"}}) == []
    assert source.vmi_gets == 0


def test_a_stopped_vm_gets_no_warning_and_no_lookup() -> None:
    source, ctx = cluster()
    created, _ = write(ctx, WEB)  # never started: no status
    assert patched(ctx, created, {"spec": {"instancetype": {"name": "u1.large"}}}) == []
    assert source.vmi_gets == 0


def test_a_vmi_not_read_in_time_is_said_not_guessed() -> None:
    source, ctx = cluster()
    running = start_running(source, write(ctx, WEB)[0])
    assert patched(ctx, running, {"spec": {"instancetype": {"name": "u1.large"}}})
    source.unavailable = "ReadTimeoutError"  # every VMI read now takes longer than the lookup timeout
    warnings = patched(ctx, running, {"spec": {"instancetype": {"name": "u1.small"}}})
    assert len(warnings) == 1 and warnings[0].startswith("live update: not predicted: the running VMI was not read "
                                                        "in time (GET virtualmachineinstances apps/web")


def test_a_revision_not_read_in_time_is_said_too() -> None:
    class Slow:  # a cluster source whose VMI answers but whose revisions time out
        default_namespace = "apps"

        def get(self, kind, name, namespace=None):
            return None

        def get_vmi(self, name, namespace):
            return {"metadata": {"name": name}, "spec": {}, "status": {}}

        def get_revision(self, name, namespace):
            raise SourceUnavailable(f"GET controllerrevisions {namespace}/{name}: ReadTimeoutError")

    old = {**WEB, "status": {"printableStatus": "Running"}}
    new = {**old, "spec": {**old["spec"], "instancetype": {"name": "u1.large"}}}
    warnings = live_update_warnings(new, old, "UPDATE", "apps", ReviewContext(source=Slow()))
    assert warnings == ["live update: not predicted: the VMI's start revision was not read in time "
                        "(GET controllerrevisions apps/revision-start-vm--1: ReadTimeoutError)"]


def test_under_expand_the_flat_vm_the_webhook_stores_is_planned() -> None:
    source, ctx = cluster("expand")
    created, _ = write(ctx, WEB)
    assert "instancetype" not in created["spec"]  # stored flat
    running = start_running(source, created)
    update = merge_patch(running, {"spec": {"instancetype": {"name": "u1.large"}}})
    flat, warnings = write(ctx, update, old=running)
    assert "instancetype" not in flat["spec"] and flat["spec"]["template"]["spec"]["domain"]["cpu"]["sockets"] == 2
    assert [w for w in warnings if w.startswith("live update:")] == [
        "live update: CPU sockets 1 -> 2 will be hot-plugged",
        "live update: guest memory 4Gi -> 8Gi will be hot-plugged"]


# --- the function's own rules -------------------------------------------------------------------------------

@pytest.mark.parametrize("status, running", [
    ({"printableStatus": "Running"}, True), ({"printableStatus": "Migrating"}, True), ({"ready": True}, True),
    ({"printableStatus": "Stopped"}, False), ({"ready": "true"}, False), ({}, False), (None, False)])
def test_is_running(status: Any, running: bool):
    vm = copy.deepcopy(WEB)
    if status is not None:
        vm["status"] = status
    assert is_running(vm) is running


def test_no_warning_without_a_source_that_reads_vmis_or_without_an_old_running_vm():
    old = {**WEB, "status": {"printableStatus": "Running"}}
    new = merge_patch(old, SIZE["u1.large"])
    offline = ReviewContext(source=InMemorySource(load_catalog(default_namespace="apps").objects(), "apps"))
    assert live_update_warnings(new, old, "UPDATE", "apps", offline) == []
    source, ctx = cluster()
    assert live_update_warnings(new, old, "CREATE", "apps", ctx) == []
    assert live_update_warnings(new, None, "UPDATE", "apps", ctx) == []
    assert source.vmi_gets == 0
    # a running VM whose VMI is gone: read, nothing to say
    assert live_update_warnings(new, old, "UPDATE", "apps", ctx) == [] and source.vmi_gets == 1


def test_the_stored_vm_is_what_is_compared():
    """`stored` (the VM as the webhook rewrites it) wins over the object received."""
    source, ctx = cluster()
    running = start_running(source, write(ctx, WEB)[0])
    resized = merge_patch(running, SIZE["u1.large"])
    assert live_update_warnings(resized, running, "UPDATE", "apps", ctx, stored=running) == []
    assert source.vmi_gets == 0
    assert live_update_warnings(running, running, "UPDATE", "apps", ctx, stored=resized) == [
        "live update: CPU sockets 1 -> 2 will be hot-plugged",
        "live update: guest memory 4Gi -> 8Gi will be hot-plugged"]


def test_a_missing_start_revision_is_said():
    source, ctx = cluster()
    running = start_running(source, write(ctx, WEB)[0])
    source.remove("ControllerRevision", "revision-start-vm-uid-1-1", "apps")
    assert live_update_warnings(merge_patch(running, SIZE["u1.large"]), running, "UPDATE", "apps", ctx) == [
        "live update: not predicted: the VMI's start revision was not found"]
