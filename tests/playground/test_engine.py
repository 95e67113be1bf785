"""instancetype_webhook/playground/engine.py: the editor's text through /mutate's and /validate's handlers and
/preview's code."""
from __future__ import annotations

import json

import jsonpatch
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from instancetype_webhook.admission.context import ReviewContext
from instancetype_webhook.playground.engine import Choices, PlaygroundError, matcher, run
from instancetype_webhook.playground.routes import bundled_samples
from instancetype_webhook.playground.yamlpos import dump
from instancetype_webhook.sources.catalog import load_catalog
from tests.kit.shared_data import ROOT

SAMPLES = {s.name: s.text for s in bundled_samples()}


@pytest.fixture(scope="module")
def ctx() -> ReviewContext:
    return ReviewContext(source=load_catalog(), vm_policy_overrides=True)  # as `make serve`


def spec_domain(vm: dict) -> dict:
    return vm["spec"]["template"]["spec"]["domain"]


def test_expand_sample_is_stored_flat_by_the_mutate_patch(ctx):
    out = run(SAMPLES["expand"], Choices(), ctx)
    assert (out["ok"], out["allowed"], out["policy"], out["policyOrigin"]) == (True, True, "expand", "annotation")
    sent, stored = yaml.safe_load(out["sentYAML"]), yaml.safe_load(out["storedYAML"])
    assert "instancetype" not in stored["spec"] and "preference" not in stored["spec"]
    assert spec_domain(stored)["cpu"] == {"cores": 1, "sockets": 1, "threads": 1}
    assert spec_domain(stored)["memory"] == {"guest": "4Gi"}  # u1.medium
    assert jsonpatch.apply_patch(sent, out["patch"]) == stored
    assert out["flat"] is True and out["validate"] == {"allowed": True}
    assert '<memory unit="b">4294967296</memory>' in out["domainXML"] and out["domainXMLPolicy"] == "expand"
    left, right = out["changedLines"]
    assert left > 0 and right > left  # the matchers went, the flat fields came


def test_reference_policy_stores_the_vm_as_sent(ctx):
    out = run(SAMPLES["reference"], Choices(), ctx)
    assert (out["allowed"], out["policy"], out["patch"], out["flat"]) == (True, "reference", [], False)
    assert out["storedYAML"] == out["sentYAML"] and out["changedLines"] == [0, 0]
    assert "<domain" in out["domainXML"]  # virt-controller applies the references at start


def test_a_conflict_points_at_the_lines_of_its_fields(ctx):
    out = run(SAMPLES["conflict"], Choices(), ctx)
    assert (out["allowed"], out["deniedBy"], out["status"]["code"]) == (False, "mutate", 422)
    lines = SAMPLES["conflict"].splitlines()
    where = {c["field"]: lines[c["line"] - 1].strip() for c in out["causes"]}
    assert where == {"spec.template.spec.domain.cpu.sockets": "sockets: 4",
                     "spec.template.spec.domain.memory.guest": "guest: 8Gi"}
    assert all(c["exact"] for c in out["causes"])
    assert "storedYAML" not in out and "domainXML" not in out


def test_under_reference_the_validating_webhook_refuses_the_conflict(ctx):
    text = SAMPLES["conflict"].replace("    instancetype-webhook.kubevirt.io/policy: expand\n", "")
    out = run(text, Choices(), ctx)
    assert (out["allowed"], out["deniedBy"], out["policy"]) == (False, "validate", "reference")
    assert {c["field"] for c in out["causes"]} == {"spec.template.spec.domain.cpu.sockets",
                                                    "spec.template.spec.domain.memory.guest"}


def test_an_admission_review_in_the_editor_points_into_request_object(ctx):
    text = (ROOT / "examples" / "vm-conflict.json").read_text()
    out = run(text, Choices(), ctx)
    lines = text.splitlines()
    assert sorted(lines[c["line"] - 1].strip() for c in out["causes"]) == ['"guest": "8Gi"', '"sockets": 4']


def test_choices_set_the_matchers_and_the_policy(ctx):
    out = run(SAMPLES["reference"], Choices(policy="expand", instancetype="u1.large", preference="rhel.9"), ctx)
    sent, stored = yaml.safe_load(out["sentYAML"]), yaml.safe_load(out["storedYAML"])
    assert sent["spec"]["instancetype"] == {"name": "u1.large"} and sent["spec"]["preference"] == {"name": "rhel.9"}
    assert spec_domain(stored)["memory"] == {"guest": "8Gi"}
    assert json.loads(stored["metadata"]["annotations"]["instancetype-webhook.kubevirt.io/expanded-from"])[
        "preference"]["name"] == "rhel.9"


def test_resize_previews_the_stored_vm_at_another_size(ctx):
    out = run(SAMPLES["expand"], Choices(resize_instancetype="u1.2xlarge"), ctx)
    resized = out["resize"]
    assert resized["allowed"] is True
    vm = yaml.safe_load(resized["vmYAML"])
    assert spec_domain(vm)["memory"] == {"guest": "32Gi"} and spec_domain(vm)["cpu"]["sockets"] == 8
    assert '<memory unit="b">34359738368</memory>' in resized["domainXML"]
    assert any(r["change"] != "same" for r in resized["diff"])


def test_resize_of_a_vm_that_keeps_its_references_says_why_not(ctx):
    out = run(SAMPLES["reference"], Choices(resize_instancetype="u1.2xlarge"), ctx)
    assert out["resize"]["allowed"] is False and "keeps its references" in out["resize"]["message"]


def test_a_missing_instance_type_is_refused_with_its_name(ctx):
    out = run(SAMPLES["missing-reference"], Choices(), ctx)
    assert out["allowed"] is False and "u1.colossal" in out["status"]["message"]


@pytest.mark.parametrize(("text", "error"), [
    ("spec:\n  running: [true\n", "line 3, column 1: "),
    ("kind: ConfigMap\ndata: {}\n", "holds a ConfigMap"),
    ("- a\n- b\n", "must be a VirtualMachine"),
    ("kind: AdmissionReview\napiVersion: admission.k8s.io/v1\nrequest: {uid: x, kind: {}, operation: CREATE}\n",
     "request.object: required"),
])
def test_text_that_is_not_a_vm_is_answered_with_a_reason(ctx, text, error):
    out = run(text, Choices(), ctx)
    assert out["ok"] is False and error in out["error"]


def test_choices_are_checked():
    with pytest.raises(PlaygroundError, match="policy must be one of"):
        Choices.from_json({"policy": "everything"})
    with pytest.raises(PlaygroundError, match="short string"):
        Choices.from_json({"instancetype": 7})
    assert matcher("VirtualMachineInstancetype/small", "instancetype") == {
        "kind": "VirtualMachineInstancetype", "name": "small"}
    with pytest.raises(PlaygroundError, match="kind must be one of"):
        matcher("VirtualMachinePreference/small", "instancetype")


def test_the_text_is_never_changed_in_place(ctx):
    text = SAMPLES["expand"]
    first = run(text, Choices(instancetype="u1.large"), ctx)
    assert run(text, Choices(instancetype="u1.large"), ctx) == first


def test_each_patch_operation_points_at_its_line(ctx):
    out = run(SAMPLES["expand"], Choices(), ctx)
    texts = {"sent": out["sentYAML"].splitlines(), "stored": out["storedYAML"].splitlines()}
    assert len(out["patchLines"]) == len(out["patch"])
    for op, at in zip(out["patch"], out["patchLines"], strict=True):
        assert at["side"] == ("sent" if op["op"] == "remove" else "stored")
        key = op["path"].rsplit("/", 1)[1].replace("~1", "/")
        line = texts[at["side"]][at["line"] - 1].strip()
        assert line.startswith((f"{key}:", f"'{key}':")), (op["path"], line)


def test_the_guest_change_warnings_of_mutate_are_shown(ctx):
    out = run(SAMPLES["reference"], Choices(policy="expand", instancetype="u1.large", preference="windows.11.virtio"),
              ctx)
    assert out["allowed"] is True
    assert out["warnings"] == ["flattening changes input default-0: bus virtio -> usb"]
    assert out["warnings"] == out["mutate"]["warnings"]  # /mutate's own answer


_json = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.sampled_from(["u1.medium", "fedora", "", "4Gi", "x"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["spec", "template", "domain", "cpu", "memory", "guest", "sockets", "name", "kind",
                         "instancetype", "preference", "devices", "volumes", "metadata", "namespace"]),
        inner, max_size=4),
    max_leaves=20)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(st.text(max_size=200),
                 st.builds(lambda spec: dump({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
                                              "metadata": {"name": "f"}, "spec": spec}),
                           st.dictionaries(st.sampled_from(["instancetype", "preference", "template", "running"]),
                                           _json, max_size=4))),
       st.sampled_from(["", "reference", "expand", "expandAll"]))
def test_any_text_gets_an_answer_never_an_exception(ctx, text, policy):
    out = run(text, Choices(policy=policy, resize_instancetype="u1.large"), ctx)
    assert out["ok"] in (True, False)
    if not out["ok"]:
        assert out["error"]
    elif not out["allowed"]:
        assert out["status"]["message"] or out["causes"]
    else:
        assert yaml.safe_load(out["storedYAML"]) is not None


def test_a_text_larger_than_any_storable_vm_is_refused_before_parsing(ctx):
    from instancetype_webhook.playground.engine import MAX_TEXT_BYTES

    text = SAMPLES["expand"] + "#" * MAX_TEXT_BYTES
    out = run(text, Choices(), ctx)
    assert out == {"ok": False, "error": "the text is larger than 2 MiB: no API server stores a VM that large "
                   "(etcd's limit is 1.5 MiB)"}
    assert run(SAMPLES["expand"] + "#" * (MAX_TEXT_BYTES // 2), Choices(), ctx)["ok"] is True


# -- a second release: the page shows what it answers otherwise (admission.whatif)

WINDOWS_TEXT = """\
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: win, namespace: ns}
spec:
  runStrategy: Always
  instancetype: {name: u1.large}
  preference: {name: windows.10.virtio}
  template:
    spec:
      domain: {devices: {}}
"""


def test_a_second_release_shows_what_it_answers_otherwise(ctx):
    out = run(WINDOWS_TEXT, Choices(policy="expand", compare_release="v1.8.4"), ctx)
    assert out["ok"] and out["allowed"]
    what_if = out["whatIf"]
    assert (what_if["first"], what_if["second"], what_if["same"]) == ("main", "v1.8.4", False)
    # the server's instance types and preferences as v1.8.4's API server serves them: pruned to its schema, so the
    # preference's preferredVideoType (v1.9's field) writes no video type there; the flat VM's provenance names the
    # release that flattened it
    fields = {f["path"]: (f["first"], f["second"]) for f in what_if["fields"]}
    assert sorted(fields) == ["metadata.annotations.instancetype-webhook.kubevirt.io/expanded-from",
                              "spec.template.spec.domain.devices.video.type"]
    assert fields["spec.template.spec.domain.devices.video.type"][1] == "(absent)"
    assert any("/usr/share/edk2/ovmf/" in line and line.startswith("-") for line in what_if["lines"])
    assert any("/usr/share/OVMF/" in line and line.startswith("+") for line in what_if["lines"])
    assert what_if["text"].startswith("what-if: main -> v1.8.4: ")
    assert out["domainXML"] == run(WINDOWS_TEXT, Choices(policy="expand"), ctx)["domainXML"]  # the first is kept


def test_a_second_release_that_answers_alike_and_one_that_names_none(ctx):
    same = run(SAMPLES["conflict"], Choices(compare_release="v1.9.0"), ctx)["whatIf"]
    assert same["same"] and same["text"] == "what-if: main -> v1.9.0: no differences\n"
    assert "whatIf" not in run(SAMPLES["expand"], Choices(), ctx)
    bad = run(SAMPLES["expand"], Choices(compare_release="banana"), ctx)
    assert not bad["ok"] and bad["error"].startswith("compare with release: cannot parse KubeVirt version 'banana'")
