"""admission/resize.py: resizing through the mutating decision, in process (policy `expand`, bundled catalogue).
The writes are what `kubectl` sends, as the API server turns them into reviews: a create, then a merge patch
(`kubectl patch vm web --type merge -p '{"spec":{"instancetype":{"name":"u1.2xlarge"}}}'`) applied to the
stored VM, the UPDATE's object; each answer's JSONPatch is applied as the API server applies it, and
/validate sees the patched object. (Was tests/server/test_resize_webhook.py, over uvicorn and the fake API.)"""
from __future__ import annotations

import copy
from typing import Any

import orjson

from instancetype_webhook.admission.policy import PROVENANCE_KEY, decide
from instancetype_webhook.admission.preview import preview
from instancetype_webhook.admission.resize import resize_answer, resize_named, resize_vm
from instancetype_webhook.kubevirt.liveupdate import merge_patch
from tests.kit.admission import SEVEN, catalog_context, post, stored
from tests.kit.builders import review

CTX = catalog_context("expand", namespace="apps")
USER_DATA = "#cloud-config\nusers:\n  - name: ops\n"
WEB = {
    "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
    "metadata": {"name": "web", "namespace": "apps", "labels": {"app": "web"},
                 "annotations": {"example.com/owner": "team-a"}},
    "spec": {
        "runStrategy": "Halted", "instancetype": {"name": "u1.medium"}, "preference": {"name": "fedora"},
        "template": {"metadata": {"labels": {"app": "web"}}, "spec": {
            "domain": {"devices": {"disks": [{"name": "rootdisk", "bootOrder": 1}]}},
            "volumes": [{"name": "rootdisk", "containerDisk": {"image": "quay.io/containerdisks/fedora:41"}},
                        {"name": "cloudinit", "cloudInitNoCloud": {"userData": USER_DATA}}]}},
    },
}



class Written:
    """The outcome of one write: the stored VM, or the denial's status; the warnings either way."""

    def __init__(self, vm: dict[str, Any] | None, status: dict[str, Any] | None, warnings: list[str]):
        self.vm, self.status, self.warnings = vm, status, warnings


def write(obj: dict[str, Any], old: dict[str, Any] | None = None) -> Written:
    """/mutate, the patch applied, then /validate on the result: what the API server stores."""
    operation = "UPDATE" if old is not None else "CREATE"
    resp = post(CTX, "/mutate", review(obj, operation, old=old))
    warnings = list(resp.get("warnings", []))
    if not resp["allowed"]:
        return Written(None, resp["status"], warnings)
    vm = stored(obj, resp)
    checked = post(CTX, "/validate", review(vm, operation, old=old))
    warnings += checked.get("warnings", [])
    if not checked["allowed"]:
        return Written(None, checked["status"], warnings)
    return Written(vm, None, warnings)


def _create(vm: dict) -> dict:
    out = write(vm)
    assert out.vm is not None, out.status
    return out.vm


def _patch(stored_vm: dict, patch: dict) -> Written:
    return write(merge_patch(stored_vm, patch), old=stored_vm)


def _comparable(vm: dict) -> dict:
    """The VM without its status (KubeVirt's to write)."""
    out = copy.deepcopy(vm)
    out.pop("status", None)
    return out


def test_kubectl_patch_to_a_bigger_instance_type() -> None:
    first = _create(WEB)
    assert "instancetype" not in first["spec"]
    assert first["spec"]["template"]["spec"]["domain"]["cpu"]["sockets"] == 1
    out = _patch(first, {"spec": {"instancetype": {"name": "u1.2xlarge"}}})
    resized = out.vm
    assert resized is not None, out.status
    domain = resized["spec"]["template"]["spec"]["domain"]
    assert (domain["cpu"]["sockets"], domain["memory"]["guest"]) == (8, "32Gi")
    assert "instancetype" not in resized["spec"] and "preference" not in resized["spec"]
    # the same as a fresh expansion with u1.2xlarge (another name, same owner's fields)
    fresh = _create({**WEB, "metadata": {**WEB["metadata"], "name": "fresh"},
                     "spec": {**WEB["spec"], "instancetype": {"name": "u1.2xlarge"}}})
    fresh["metadata"]["name"] = "web"
    assert _comparable(resized) == _comparable(fresh)
    # the owner's own fields are all there
    assert resized["metadata"]["labels"] == {"app": "web"}
    assert resized["metadata"]["annotations"]["example.com/owner"] == "team-a"
    assert resized["spec"]["template"]["metadata"]["labels"] == {"app": "web"}
    assert domain["devices"]["disks"][0]["bootOrder"] == 1
    assert resized["spec"]["template"]["spec"]["volumes"][1]["cloudInitNoCloud"]["userData"] == USER_DATA
    assert '"name":"u1.2xlarge"' in resized["metadata"]["annotations"][PROVENANCE_KEY]
    # and back down again
    back = _patch(resized, {"spec": {"instancetype": {"name": "u1.medium"}}}).vm
    assert back is not None and _comparable(back)["spec"] == _comparable(first)["spec"]


def test_hand_written_vm_resized_to_cx1_is_stored_flat_with_the_warning() -> None:
    seven = _create(SEVEN)
    out = _patch(seven, {"spec": {"instancetype": {"name": "cx1.8xlarge"}}})
    assert out.vm is not None, out.status
    assert "instancetype" not in out.vm["spec"]
    cpu = out.vm["spec"]["template"]["spec"]["domain"]["cpu"]
    assert cpu["sockets"] == 32 and cpu["dedicatedCpuPlacement"] is True and cpu["maxSockets"] == 32
    assert out.vm["spec"]["template"]["spec"]["domain"]["memory"] == {"guest": "64Gi", "hugepages": {"pageSize": "2Mi"}}
    assert "cx1.8xlarge replaced hand-written cpu.sockets 7 -> 32" in out.warnings
    assert "cx1.8xlarge replaced hand-written memory.guest 14Gi -> 64Gi" in out.warnings
    assert PROVENANCE_KEY in out.vm["metadata"]["annotations"]


def test_a_hand_edited_owned_field_is_refused() -> None:
    first = _create(WEB)
    edited = _patch(first, {"spec": {"template": {"spec": {"domain": {"cpu": {"sockets": 2}}}}}})
    assert edited.vm is not None, edited.status  # a flat VM: any owner's edit is fine
    out = _patch(edited.vm, {"spec": {"instancetype": {"name": "u1.2xlarge"}}})
    assert out.vm is None and out.status["code"] == 422
    assert out.status["message"] == (
        "VM field(s) spec.template.spec.domain.cpu.sockets conflicts with selected instance type: "
        "2 was set by hand, u1.medium had set 1")
    assert out.status["details"]["causes"] == [{
        "reason": "FieldValueInvalid", "field": "spec.template.spec.domain.cpu.sockets",
        "message": "VM field(s) spec.template.spec.domain.cpu.sockets conflicts with selected instance type: "
                   "2 was set by hand, u1.medium had set 1"}]


def test_create_and_unchanged_matchers_stay_upstream_conflicts() -> None:
    both = copy.deepcopy(SEVEN)
    both["metadata"]["name"] = "both"
    both["spec"]["instancetype"] = {"name": "cx1.8xlarge"}
    out = write(both)
    assert out.vm is None and out.status["code"] == 422
    assert "spec.template.spec.domain.cpu.sockets conflicts with selected instance type" in out.status["message"]
    assert "was set by hand" not in out.status["message"]


def test_preview_resizes_as_the_update_would() -> None:
    first = _create({**WEB, "metadata": {**WEB["metadata"], "name": "pre"}})
    out = orjson.loads(orjson.dumps(preview(copy.deepcopy(first), CTX, None, instancetype="u1.2xlarge")))
    assert out["allowed"] and out["replaced"] == [] and out["warnings"] == []
    updated = _patch(first, {"spec": {"instancetype": {"name": "u1.2xlarge"}}}).vm
    assert updated is not None and _comparable(out["vm"]) == _comparable(updated)
    assert {op["path"] for op in out["patch"]} >= {"/spec/template/spec/domain/cpu/sockets"}
    assert "<domain" in (out.get("domainXML") or "")
    hand = preview(copy.deepcopy(SEVEN), CTX, None, instancetype="cx1.8xlarge")
    assert hand["allowed"] and hand["replaced"][0] == {"field": "spec.template.spec.domain.cpu.sockets", "old": 7}
    assert "cx1.8xlarge replaced hand-written cpu.sockets 7 -> 32" in hand["warnings"]
    refused = preview(copy.deepcopy(first), CTX, None, instancetype="u1.colossal")
    assert not refused["allowed"] and refused["error"]["kind"] == "notFound" and "vm" not in refused
    # (a size that is not [KIND/]NAME is the endpoint's 422: tests/server/test_app.py test_preview_endpoint)


def test_an_update_keeping_the_matchers_stays_upstreams_conflict() -> None:
    kept = copy.deepcopy(WEB)  # stored before the webhook was installed: it still references u1.medium
    kept["metadata"]["name"] = "kept"
    out = _patch(kept, {"spec": {"template": {"spec": {"domain": {"cpu": {"sockets": 2}}}}}})
    assert out.vm is None and out.status["code"] == 422
    assert out.status["message"].endswith(
        "VM field(s) spec.template.spec.domain.cpu.sockets conflicts with selected instance type")


def test_reapplying_the_original_manifest_is_a_no_op() -> None:
    """`kubectl apply` of the same manifest again puts the matchers back on the flat VM (a 3-way merge
    keeps the flat fields): the resize re-flattens to exactly the stored VM instead of a conflict."""
    first = _create({**WEB, "metadata": {**WEB["metadata"], "name": "again"}})
    update = merge_patch(first, {"spec": {"instancetype": WEB["spec"]["instancetype"],
                                          "preference": WEB["spec"]["preference"]}})
    resp = post(CTX, "/mutate", review(update, "UPDATE", old=first))
    assert stored(update, resp) == first and "warnings" not in resp


# --- the functions themselves ------------------------------------------------------------------------------

def test_resize_named_is_the_update_naming_the_size():
    first = _create(WEB)
    result, denied, vm, warnings = resize_named(first, "u1.large", None, "apps", CTX)
    assert denied is None and result is not None and warnings == []
    assert vm["spec"]["template"]["spec"]["domain"]["cpu"]["sockets"] == 2 and "instancetype" not in vm["spec"]
    assert vm == _patch(first, {"spec": {"instancetype": {"name": "u1.large"}}}).vm
    # a nameless matcher is refused by the mutator stage: no resize at all
    result, denied, vm, _ = resize_named(first, "VirtualMachineInstancetype/", None, "apps", CTX)
    assert result is None and vm is None and denied is not None and not denied.allowed


def test_resize_vm_keeps_the_submitted_metadata_and_refuses_a_missing_size():
    first = _create(WEB)
    update = merge_patch(first, {"spec": {"instancetype": {"name": "u1.large"}}})
    _, denied, vm = resize_vm(update, first, "apps", CTX)
    assert denied is None and vm["metadata"]["labels"] == {"app": "web"}
    missing = merge_patch(first, {"spec": {"instancetype": {"name": "u1.colossal"}}})
    result, denied, vm = resize_vm(missing, first, "apps", CTX)
    assert vm is None and denied is not None and denied.code == 400 and result.checked.error.kind == "notFound"


def test_handwritten_resizing_can_be_turned_off():
    seven = _create(SEVEN)
    update = merge_patch(seven, {"spec": {"instancetype": {"name": "cx1.8xlarge"}}})
    _, denied, vm = resize_vm(update, seven, "apps", catalog_context("expand", namespace="apps",
                                                                      resize_handwritten=False))
    assert vm is None and denied is not None and denied.code == 422  # upstream's conflict instead


def test_resize_answer_patches_from_the_vm_received():
    first = _create(WEB)
    update = merge_patch(first, {"spec": {"instancetype": {"name": "u1.large"}}})
    decision = decide("expand", "UPDATE", update, first, "apps", None, False)
    answer = resize_answer(update, first, "apps", decision, CTX)
    assert answer.action == "patch" and answer.why.startswith("resize on ") and answer.policy == "expand"
    assert answer.flat == _patch(first, {"spec": {"instancetype": {"name": "u1.large"}}}).vm
    colossal = merge_patch(first, {"spec": {"instancetype": {"name": "u1.colossal"}}})
    refused = resize_answer(colossal, first, "apps", decision, CTX)
    assert refused.action == "deny" and refused.ops == [] and refused.error is not None
