"""Properties that must hold for every instance type, preference and VM a user can write (Hypothesis).

The strategies (`strategies.py`) draw objects within KubeVirt's CRD schemas and the instancetype and
preference webhooks' rules. For every draw:

- expanding twice equals expanding once;
- a flattened VM passes validation and references nothing;
- a conflict is reported exactly when the VM sets a field the instance type owns (`owned.py`, written
  from the specification's tables, is the independent statement);
- the mutating webhook's patch applied to the request is the flat VM it stores, and that VM is the
  expansion (plus the provenance annotation);
- no review, under any policy, for CREATE and UPDATE, on /mutate and /validate, raises or answers
  anything but a well-formed AdmissionReview;
- the domain XML of every admitted VM is accepted by libvirt's schema.

Runs `PROPERTY_EXAMPLES` examples per property (default 200, a few seconds each); HYPOTHESIS_PROFILE=long
runs `PROPERTY_LONG_EXAMPLES` (default 20,000): see docs, "Testing".
"""
from __future__ import annotations

import base64
import copy
import os
from typing import Any

import jsonpatch
import orjson
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from instancetype_webhook.admission import envelope as rv
from instancetype_webhook.admission.context import ReviewContext
from instancetype_webhook.admission.mutate import answer_vm, mutate
from instancetype_webhook.admission.policy import PROVENANCE_KEY
from instancetype_webhook.admission.validate import validate
from instancetype_webhook.domxml import DomainError, LauncherContext, render_domain, vmi_from_vm
from instancetype_webhook.kubevirt.causes import ExpandError
from instancetype_webhook.kubevirt.expand import expand, expand_vm_spec, has_references
from instancetype_webhook.kubevirt.source import InMemorySource
from instancetype_webhook.kubevirt.vm_webhook import validate_vm
from tests.kit.builders import review as build_review
from tests.kit.crd_schema import schema_errors
from tests.kit.owned import expected_conflicts
from tests.kit.property_strategies import NAMESPACE, Case, admitted, base_vm, cases

LONG = os.environ.get("HYPOTHESIS_PROFILE") == "long"
EXAMPLES = int(os.environ.get("PROPERTY_LONG_EXAMPLES" if LONG else "PROPERTY_EXAMPLES", 20_000 if LONG else 200))
pytestmark = pytest.mark.timeout(0 if LONG else 300)  # the long mode takes hours: no per-test limit
PROPERTY = settings(max_examples=EXAMPLES, deadline=None, database=None, print_blob=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def source(case: Case) -> InMemorySource:
    return InMemorySource(copy.deepcopy(list(case.objects)), default_namespace=NAMESPACE)


def flat_or_none(case: Case) -> dict[str, Any] | None:
    try:
        return expand(case.vm, source(case))
    except ExpandError:
        return None


@PROPERTY
@given(cases())
def test_drawn_objects_fit_the_crd_schemas_and_pass_their_admission(case: Case) -> None:
    for obj in (case.vm, *case.objects):
        assert schema_errors(obj) == [], obj["kind"]
    assert all(admitted(obj) for obj in case.objects)


def test_the_schema_check_refuses_what_the_api_server_refuses() -> None:
    vm = base_vm("bad")
    vm["spec"]["template"]["spec"]["domain"]["cpu"] = {"sockets": "two"}
    vm["spec"]["runStrategy"] = 3
    assert len(schema_errors(vm)) == 2


@PROPERTY
@given(cases())
def test_expanding_twice_equals_expanding_once(case: Case) -> None:
    flat = flat_or_none(case)
    if flat is None:
        return
    assert expand(flat, source(case)) == flat
    printed = expand_vm_spec(case.vm, source(case))
    assert expand_vm_spec(printed, source(case)) == printed


@PROPERTY
@given(cases())
def test_a_flattened_vm_passes_validation_and_references_nothing(case: Case) -> None:
    flat = flat_or_none(case)
    if flat is None:
        return
    assert not has_references(flat)
    assert not {"instancetypeRef", "preferenceRef"} & set(flat.get("status") or {})
    verdict = validate_vm(flat, InMemorySource(default_namespace=NAMESPACE))
    assert verdict.allowed, verdict


@PROPERTY
@given(cases())
def test_a_conflict_is_reported_exactly_when_the_vm_sets_an_owned_field(case: Case) -> None:
    expected = expected_conflicts(case.vm, case.instancetype) if case.instancetype is not None else []
    event(f"{len(expected)} conflicts expected" if expected else "no conflict expected")
    try:
        expand(case.vm, source(case))
    except ExpandError as exc:
        assert exc.kind == "conflict", exc
        assert [cause.field for cause in exc.causes] == expected
    else:
        assert expected == []


@PROPERTY
@given(cases())
def test_the_webhook_patch_gives_the_flat_vm_and_that_is_the_expansion(case: Case) -> None:
    ctx = ReviewContext(source=source(case), policy="expandAll")
    vm = copy.deepcopy(case.vm)
    answer = answer_vm(vm, None, "CREATE", NAMESPACE, ctx)
    assert vm == case.vm  # the request is never written
    verdict = validate_vm(case.vm, source(case))
    flat = flat_or_none(case)
    if not has_references(case.vm):
        assert answer.action == "allow" and not answer.ops
        return
    event(f"webhook: {answer.action}")
    assert (answer.action == "deny") == (flat is None or not verdict.allowed), answer.verdict
    if answer.action == "deny":
        return
    stored = jsonpatch.apply_patch(case.vm, answer.ops)
    assert stored == answer.flat
    annotations = dict(stored["metadata"].get("annotations") or {})
    assert PROVENANCE_KEY in annotations
    del annotations[PROVENANCE_KEY]
    stored["metadata"] = {k: v for k, v in stored["metadata"].items() if k != "annotations"}
    if annotations:
        stored["metadata"]["annotations"] = annotations
    assert stored == flat


def _review(case: Case, operation: str) -> bytes:
    old = None
    if operation == "UPDATE":
        old = copy.deepcopy(case.vm)
        old["metadata"]["labels"] = {"before": "update"}
    return orjson.dumps(build_review(case.vm, operation, old, uid="u-1", namespace=NAMESPACE, username="props"))


@PROPERTY
@given(cases(), st.sampled_from(["reference", "expand", "expandAll"]), st.sampled_from(["CREATE", "UPDATE"]),
       st.sampled_from([mutate, validate]))
def test_no_review_raises_or_answers_malformed(case: Case, policy: str, operation: str, handler: Any) -> None:
    review = rv.parse_review(_review(case, operation), 200)
    outcome = handler(review, ReviewContext(source=source(case), policy=policy))
    body = orjson.loads(outcome.body)
    response = body["response"]
    assert body["kind"] == "AdmissionReview" and response["uid"] == "u-1"
    assert isinstance(response["allowed"], bool)
    if not response["allowed"]:
        assert response["status"]["message"] and 400 <= response["status"]["code"] < 500
    if "patch" in response:
        ops = orjson.loads(base64.b64decode(response["patch"]))
        jsonpatch.apply_patch(case.vm, ops)


# the device plugins' allocation of every device the strategies name (two devices of one resource at most)
DEVICES = LauncherContext(env={f"PCI_RESOURCE_{name}": "0000:81:00.0,0000:82:00.0"
                               for name in ("NVIDIA_COM_A10", "NVIDIA_COM_T4", "INTEL_COM_QAT")})


@pytest.mark.libvirt
@PROPERTY
@given(cases())
def test_the_domain_xml_of_every_admitted_vm_is_valid_for_libvirt(libvirt_schema: Any, case: Case) -> None:
    flat = flat_or_none(case)
    if flat is None or not validate_vm(case.vm, source(case)).allowed:
        return
    try:
        xml = render_domain(vmi_from_vm(flat), DEVICES)
    except DomainError as exc:  # a clear refusal (e.g. a NUMA passthrough without hugepages)
        event("domain refused")
        assert str(exc)
        return
    event("domain rendered")
    assert libvirt_schema(xml) is None
