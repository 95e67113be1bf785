"""check_and_expand (one pass) answers exactly as validate_vm then expand (two calls).

Over every public conformance case as given (in tests/kubevirt/test_corpus.py), and here over hypothesis
variants of the corpus VMs that poke at what the one pass shares: the CPU, memory and architecture the
requirements read, the disks, interfaces and networks expansion adds before applying, matchers pointing
at other objects of the case (or at none), unknown fields, and cluster settings (bridge binding, CPU request).
"""
from __future__ import annotations

import copy
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

import instancetype_webhook.kubevirt.check_expand as onepass
from instancetype_webhook.conformance.cases import case_settings, case_source, case_vm
from instancetype_webhook.kubevirt.check_expand import check_and_expand
from instancetype_webhook.kubevirt.source import InMemorySource
from tests.kit.builders import undecodable_revision
from tests.kit.corpus_checks import answers, same
from tests.kit.releases import settings_as
from tests.kit.shared_data import conformance_cases

CASES = conformance_cases()


def test_the_one_pass_path_is_taken_for_most_of_the_corpus(monkeypatch):
    """Not a vacuous equivalence: most cases are answered without falling back to the two calls."""
    fallbacks = []
    real = onepass.two_calls
    monkeypatch.setattr(onepass, "two_calls", lambda *a: fallbacks.append(1) or real(*a))
    on_path = [c for c in CASES if onepass._on_path(case_vm(c))]
    for case in on_path:
        check_and_expand(case_vm(case), case_source(case["input"]), case_settings(case["input"]))
    assert len(on_path) >= 100
    assert len(fallbacks) <= len(on_path) // 10, f"{len(fallbacks)} of {len(on_path)} fell back"


SPOTS = {
    "cpu": ("spec", "template", "spec", "domain", "cpu"),
    "memory": ("spec", "template", "spec", "domain", "memory"),
    "requests": ("spec", "template", "spec", "domain", "resources", "requests"),
    "limits": ("spec", "template", "spec", "domain", "resources", "limits"),
    "devices": ("spec", "template", "spec", "domain", "devices"),
    "tspec": ("spec", "template", "spec"),
    "annotations": ("spec", "template", "metadata", "annotations"),
}
EDITS = st.sampled_from([
    ("cpu", "sockets", st.integers(0, 4)), ("cpu", "cores", st.integers(0, 3)), ("cpu", "threads", st.integers(0, 2)),
    ("cpu", "model", st.sampled_from(["", "host-passthrough"])), ("cpu", "dedicatedCpuPlacement", st.booleans()),
    ("memory", "guest", st.sampled_from(["512Mi", "1Gi", "4Gi", "0"])),
    ("requests", "memory", st.sampled_from(["256Mi", "2Gi"])), ("requests", "cpu", st.sampled_from(["1", "500m", "3"])),
    ("limits", "cpu", st.sampled_from(["2", "4"])), ("limits", "memory", st.sampled_from(["1Gi"])),
    ("devices", "autoattachPodInterface", st.booleans()), ("devices", "interfaces", st.just([])),
    ("devices", "disks", st.just([])), ("devices", "gpus", st.just([{"name": "g", "deviceName": "x/y"}])),
    ("tspec", "architecture", st.sampled_from(["", "amd64", "arm64", "s390x"])), ("tspec", "networks", st.just([])),
    ("tspec", "volumes", st.just([{"name": "extra", "containerDisk": {"image": "quay.io/x:latest"}}])),
    ("tspec", "nodeSelector", st.just({"a": "b"})), ("tspec", "xUnknown", st.integers()),
    ("annotations", "instancetype.kubevirt.io/x", st.text(max_size=3)),
])
CLUSTERS = st.sampled_from([None, ("bridge", False), ("bridge", True), ("masquerade", False)])


def _set(vm, spot, key, value):
    node = vm
    for part in SPOTS[spot]:
        if not isinstance(node.get(part), dict):
            node[part] = {}
        node = node[part]
    node[key] = value


@st.composite
def variants(draw):
    case = draw(st.sampled_from(CASES))
    vm = copy.deepcopy(case_vm(case))
    if not isinstance(vm.get("spec"), dict):
        return case, vm, None
    for spot, key, values in draw(st.lists(EDITS, max_size=4)):
        _set(vm, spot, key, draw(values))
    names = [o["metadata"]["name"] for k in ("instancetypes", "clusterInstancetypes", "preferences",
                                             "clusterPreferences")
             for o in case["input"].get(k) or [] if isinstance(o.get("metadata"), dict) and "name" in o["metadata"]]
    for matcher in ("instancetype", "preference"):
        choice = draw(st.sampled_from(["keep", "drop", "other", "missing"]))
        if choice == "drop":
            vm["spec"].pop(matcher, None)
        elif choice == "missing":
            vm["spec"][matcher] = {"name": "does-not-exist"}
        elif choice == "other" and names:
            named = "VirtualMachineInstancetype" if matcher == "instancetype" else "VirtualMachinePreference"
            kind = draw(st.sampled_from(["", named]))
            vm["spec"][matcher] = {"name": draw(st.sampled_from(names)), **({"kind": kind} if kind else {})}
    return case, vm, draw(CLUSTERS)


@hsettings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(variants())
def test_one_pass_equals_two_calls_on_variants(drawn):
    case, vm, cluster = drawn
    settings = case_settings(case["input"])
    if cluster is not None:
        settings = replace(settings, default_network_binding=cluster[0], permit_bridge_on_pod_network=cluster[1])
    same(*answers(vm, case_source(case["input"]), settings))


# -- the lookups are made as the cluster's release, as expansion makes them ---------------------------------

OLD_REVISION = undecodable_revision("fedora-v1alpha2", "ns", "fedora", kind="VirtualMachinePreference")
PINNED = {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "metadata": {"name": "v", "namespace": "ns"},
          "spec": {"preference": {"name": "fedora", "kind": "VirtualMachinePreference",
                                  "revisionName": "fedora-v1alpha2"},
                   "template": {"spec": {"domain": {"devices": {}}}}}}


@pytest.mark.parametrize(("release", "line"), [("v1.7.4", 42), ("v1.8.4", 43), ("v1.9.0", 44), ("main", 44)])
def test_a_revision_the_scheme_cannot_decode_is_refused_in_the_releases_words(release: str, line: int):
    """The decode error names the line of client-go's register.go of that release, in the one pass as in
    expansion (a lookup as main would name line 44 on every release)."""
    one, two = answers(PINNED, InMemorySource([OLD_REVISION]), settings_as(release))
    same(one, two)
    assert one.error is not None and one.error.message.endswith(
        f'in scheme "kubevirt.io/client-go/kubevirt/scheme/register.go:{line}"')
