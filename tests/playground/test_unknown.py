"""playground.unknown: the unknown fields of the editor's VM, at the line and column of their key."""
from __future__ import annotations

import dataclasses

import pytest

from instancetype_webhook.admission.context import ReviewContext
from instancetype_webhook.kubevirt.configuration import DEFAULT_SETTINGS, with_release
from instancetype_webhook.kubevirt.releases import PROFILES
from instancetype_webhook.playground.engine import Choices, run
from instancetype_webhook.playground.routes import bundled_samples
from instancetype_webhook.playground.unknown import unknown_field_marks
from instancetype_webhook.playground.yamlpos import parse
from instancetype_webhook.sources.catalog import load_catalog

VM = """apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: typo
spec:
  instancetype:
    name: u1.medium
  template:
    metadata:
      anything: goes
    spec:
      serviceAccountName: robot
      domain:
        cpu: {guest: 4}
        devices:
          disks:
            - name: a
              bus: virtio
"""


@pytest.fixture(scope="module")
def ctx() -> ReviewContext:
    return ReviewContext(source=load_catalog(), policy="expand")


def marks(text, release="main"):
    parsed = parse(text)
    return unknown_field_marks(parsed.value, parsed, (), PROFILES[release])


def test_each_unknown_field_is_placed_at_its_key():
    assert marks(VM) == [
        {"field": "spec.template.spec.domain.cpu.guest", "line": 14, "column": 15, "length": 5,
         "message": 'Warning: unknown field "spec.template.spec.domain.cpu.guest"'},
        {"field": "spec.template.spec.domain.devices.disks[0].bus", "line": 18, "column": 15, "length": 3,
         "message": 'Warning: unknown field "spec.template.spec.domain.devices.disks[0].bus"'},
    ]
    assert VM.splitlines()[13][14:19] == "guest" and VM.splitlines()[17][14:17] == "bus"


def test_the_release_decides():
    fields = [m["field"] for m in marks(VM, "v1.8")]
    assert "spec.template.spec.serviceAccountName" in fields


def test_the_run_carries_them_refused_or_not(ctx):
    out = run(VM, Choices(), ctx)
    assert [m["field"] for m in out["unknownFields"]] == [
        "spec.template.spec.domain.cpu.guest", "spec.template.spec.domain.devices.disks[0].bus"]
    older = dataclasses.replace(ctx, cluster=with_release(DEFAULT_SETTINGS, PROFILES["v1.8"]))
    assert len(run(VM, Choices(), older)["unknownFields"]) == 3


def test_an_admission_review_is_checked_at_its_object(ctx):
    review = ("apiVersion: admission.k8s.io/v1\nkind: AdmissionReview\nrequest:\n  uid: u\n"
              "  kind: {group: kubevirt.io, version: v1, kind: VirtualMachine}\n"
              "  resource: {group: kubevirt.io, version: v1, resource: virtualmachines}\n"
              "  operation: CREATE\n  namespace: default\n  object:\n"
              + "".join(f"    {line}\n" for line in VM.splitlines()))
    found = run(review, Choices(), ctx)["unknownFields"]
    line, column = found[0]["line"], found[0]["column"]
    assert (line, column) == (23, 19) and review.splitlines()[line - 1][column - 1:column + 4] == "guest"


def test_the_samples_have_none(ctx):
    for sample in bundled_samples():
        assert run(sample.text, Choices(), ctx).get("unknownFields", []) == [], sample.name
