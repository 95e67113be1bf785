"""admission/preview.py: what /preview (the playground, the CLI) answers for one VM, in process: the flat VM
and its JSONPatch, the validation causes, the guest changes and the domain XML under the effective policy;
or the same for a resize to a new size."""
from __future__ import annotations

import copy
from typing import Any

import jsonpatch
import orjson
import pytest

from instancetype_webhook.admission import envelope as rv
from instancetype_webhook.admission.context import ReviewContext
from instancetype_webhook.admission.preview import domain_xml, preview
from instancetype_webhook.sources.catalog import load_catalog
from tests.kit.admission import INFERRING, SEVEN, VM, WARNING, WINDOWS_VM, catalog_context, inferring_catalog

EXPAND = catalog_context("expand")


def preview_of(vm: Any, ctx: ReviewContext = EXPAND, namespace: str | None = None, **size: str) -> dict:
    """preview() as the endpoint sends it (JSON)."""
    return orjson.loads(orjson.dumps(preview(copy.deepcopy(vm), ctx, namespace, **size)))


def test_preview():
    out = preview_of(VM)
    assert out["allowed"] and out["conflicts"] == []
    assert jsonpatch.apply_patch(VM, out["patch"], in_place=False) == out["vm"]
    assert "spec" in out["vm"] and "instancetype" not in out["vm"]["spec"]
    assert out["domainXMLPolicy"] == "expand" and out["domainXML"].startswith("<domain")
    desktop = copy.deepcopy(VM)  # rhel.9.desktop auto-attaches a virtio tablet, but only while it is referenced
    desktop["spec"]["preference"] = {"name": "rhel.9.desktop"}
    flat_xml = preview_of(desktop)["domainXML"]
    assert '<input type="tablet" bus="usb">' in flat_xml
    reference = domain_xml(desktop, "apps", ReviewContext(source=load_catalog(default_namespace="apps")))
    assert reference["domainXMLPolicy"] == "reference"
    assert '<input type="tablet" bus="virtio" model="virtio">' in reference["domainXML"]
    conflict = copy.deepcopy(VM)
    conflict["spec"]["template"]["spec"]["domain"]["memory"] = {"guest": "1Gi"}
    out = preview_of(conflict)
    assert not out["allowed"] and out["error"]["kind"] == "conflict"
    assert out["conflicts"][0]["field"] == "spec.template.spec.domain.memory.guest"


@pytest.mark.parametrize("body", [[], "vm", {"metadata": {}}, {"spec": []}])
def test_not_a_vm_is_a_review_error(body: Any):
    with pytest.raises(rv.ReviewError, match="VirtualMachine object with a spec"):
        preview(body, EXPAND, None)


def test_preview_infers_too(tmp_path):
    """Was tests/server/test_infer_admission.py."""
    ctx = catalog_context("expand", inferring_catalog(tmp_path), vm_policy_overrides=True)
    body = preview_of(INFERRING, ctx)
    assert body["allowed"] and "instancetype" not in body["vm"]["spec"]
    assert body["vm"]["spec"]["template"]["spec"]["domain"]["cpu"] == {"cores": 1, "sockets": 1, "threads": 1}


def test_a_refusal_of_the_mutator_stage_is_answered_without_a_vm():
    vm = copy.deepcopy(VM)
    vm["spec"]["instancetype"] = {"kind": "VirtualMachineInstancetype"}  # neither name nor inferFromVolume
    out = preview_of(vm)
    assert not out["allowed"] and "vm" not in out and "patch" not in out
    assert out["conflicts"][0]["field"] == "spec.instancetype"


def test_a_missing_reference_is_an_error_of_kind_not_found():
    vm = copy.deepcopy(VM)
    vm["spec"]["instancetype"] = {"name": "no-such-size"}
    out = preview_of(vm)
    assert out["error"]["kind"] == "notFound" and "vm" not in out


# --- the guest's auto-attached devices (were tests/server/test_preserve_guest.py) ----------------------------




def _inputs(flat: dict) -> list | None:
    return flat["spec"]["template"]["spec"]["domain"]["devices"].get("inputs")


def test_preview_reports_the_same_change():
    body = preview_of(WINDOWS_VM)
    assert WARNING in body["warnings"] and _inputs(body["vm"]) is None
    assert '<input type="tablet" bus="usb">' in body["domainXML"]  # upstream's expanded VM at start


def test_preview_under_preserve_guest_renders_the_preserved_vm():
    body = preview_of(WINDOWS_VM, catalog_context("expand", preserve_guest=True))
    assert _inputs(body["vm"]) == [{"name": "default-0", "type": "tablet", "bus": "virtio"}]
    assert '<input type="tablet" bus="virtio" model="virtio">' in body["domainXML"]
    assert 'model="qemu-xhci"' not in body["domainXML"]


# --- a resize -------------------------------------------------------------------------------------------------




def test_a_resize_preview_says_what_it_replaced():
    hand = preview_of(SEVEN, instancetype="cx1.8xlarge")
    assert hand["allowed"] and hand["replaced"][0] == {"field": "spec.template.spec.domain.cpu.sockets", "old": 7}
    assert "cx1.8xlarge replaced hand-written cpu.sockets 7 -> 32" in hand["warnings"]
    assert jsonpatch.apply_patch(SEVEN, hand["patch"], in_place=False) == hand["vm"]
    assert hand["domainXML"].startswith("<domain")


def test_a_resize_to_a_size_that_does_not_resolve_is_refused_without_a_vm():
    flat = preview_of(VM)["vm"]
    refused = preview_of(flat, instancetype="u1.colossal")
    assert not refused["allowed"] and refused["error"]["kind"] == "notFound" and "vm" not in refused
