"""The mutating decision's live-update warnings: on an UPDATE of a running VM that changes what shapes its
template (the template, the instance type or preference matcher), say what KubeVirt will do with the
change (instancetype_webhook.kubevirt.liveupdate: hot-plugged, needs a restart, refused, delayed).

Cost: nothing on CREATE, on an UPDATE that leaves the template and matchers as they were (status writes,
labels, runStrategy), or for a VM whose stored status says it is not running. Otherwise bounded live GETs
through the cluster source: `get_vmi`, then `get_revision` (cached) of the VM-start revision and of the
revision a new size would be stored as (the plan checks it is not stale);
under the source's cache-only mode they raise CacheMiss like any lookup, so the review moves to a worker
thread with its deadline. A source without `get_vmi` (the bundled catalogue, offline) gives no warning.
When the VMI cannot be read in time the warning says so instead of guessing.
"""
from __future__ import annotations

from typing import Any, Final

from instancetype_webhook.admission.context import ReviewContext
from instancetype_webhook.kubevirt.liveupdate import Started, plan_update
from instancetype_webhook.kubevirt.liveupdate.revisions import LayeredSource
from instancetype_webhook.kubevirt.liveupdate.warnings import PREFIX, plan_warnings
from instancetype_webhook.kubevirt.source import SourceUnavailable

RUNNING: Final = ("Running", "Migrating")
GENERATION_ANNOTATION: Final = "kubevirt.io/vm-generation"


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _shape(vm: dict[str, Any]) -> tuple[Any, Any, Any]:
    spec = _obj(vm.get("spec"))
    return spec.get("template"), spec.get("instancetype"), spec.get("preference")


def is_running(vm: dict[str, Any]) -> bool:
    status = _obj(vm.get("status"))
    return status.get("printableStatus") in RUNNING or status.get("ready") is True


def live_update_warnings(vm: dict[str, Any], old_vm: Any, operation: str, namespace: str, ctx: ReviewContext,
                         stored: dict[str, Any] | None = None) -> list[str]:
    """The warnings for this review (`stored`: the VM as the webhook stores it, when it rewrites it)."""
    if operation != "UPDATE" or not isinstance(old_vm, dict):  # before getattr: a missing attribute costs a raise
        return []
    get_vmi = getattr(ctx.source, "get_vmi", None)
    if get_vmi is None or not is_running(old_vm):
        return []
    new_vm = stored if stored is not None else vm
    if _shape(new_vm) == _shape(old_vm):
        return []
    name = str(_obj(old_vm.get("metadata")).get("name") or "")
    try:
        vmi = get_vmi(name, namespace)
    except SourceUnavailable as exc:
        return [f"{PREFIX}not predicted: the running VMI was not read in time ({exc})"]
    if vmi is None:
        return []
    try:
        revision = ctx.source.get_revision(_start_revision(old_vm, vmi), namespace)
    except SourceUnavailable as exc:
        return [f"{PREFIX}not predicted: the VMI's start revision was not read in time ({exc})"]
    start_spec = _obj(revision.get("data")).get("spec") if isinstance(revision, dict) else None
    if not isinstance(start_spec, dict):
        return [f"{PREFIX}not predicted: the VMI's start revision was not found"]
    started = Started(old_vm, start_spec, LayeredSource(ctx.source), vmi)
    try:
        plan = plan_update(started, new_vm, ctx.cluster, templates=False)
    except SourceUnavailable as exc:
        return [f"{PREFIX}not predicted: a revision was not read in time ({exc})"]
    except (ValueError, TypeError, KeyError, AttributeError) as malformed:  # malformed stored objects
        return [f"{PREFIX}not predicted: {type(malformed).__name__}: {malformed}"]
    return plan_warnings(plan, vmi)


def _start_revision(old_vm: dict[str, Any], vmi: dict[str, Any]) -> str:
    """`revision-start-vm-<uid>-<generation>`: the generation the VMI was started from (its annotation)."""
    uid = _obj(old_vm.get("metadata")).get("uid") or ""
    generation = _obj(_obj(vmi.get("metadata")).get("annotations")).get(GENERATION_ANNOTATION)
    if generation is None:
        generation = _obj(old_vm.get("metadata")).get("generation") or 1
    return f"revision-start-vm-{uid}-{generation}"
