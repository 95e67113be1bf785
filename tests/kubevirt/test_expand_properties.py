"""Property tests over the corpus VMs (hypothesis): expansion is idempotent and keeps what it does not own.

Each example takes a corpus case that expands cleanly and sprinkles unknown fields and labels over the
VM. Then:
- the flat result expands to itself, and is a fixpoint of the defaults and of the preference
  (re-applying either changes nothing);
- every scalar the submitted VM holds is still there with the same value, except the three fields
  upstream overwrites on purpose (instance type `maxSockets`, preference `acpi` and `disableHotplug`);
- the input is never mutated.
"""
from __future__ import annotations

import copy
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from instancetype_webhook.kubevirt.expand import (
    default_template_spec,
    expand,
    find_specs,
    finish_expansion,
    has_references,
)
from instancetype_webhook.kubevirt.preference.apply import apply_preference
from tests.kit.conformance_io import source_for
from tests.kit.shared_data import conformance_cases

# cases that expand cleanly as submitted (no mutating webhook stage before, the default configuration) and
# reference something (a VM without references is answered as it is, without defaults: nothing to re-apply)
GOOD = [c for c in conformance_cases() if "vm" in c["expected"] and not {"expectedInfer", "expectedMutate"} & set(c)
        and not c["input"].get("kubevirtConfiguration") and has_references(c["input"]["vm"])]
OVERWRITTEN = re.compile(r"^spec\.template\.spec\.domain\."
                         r"(cpu\.maxSockets|features\.acpi\..*|devices\.disableHotplug)$")

keys = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=3, max_size=8).map(lambda s: "x" + s)
scalars = st.one_of(st.booleans(), st.integers(-5, 5), st.text(max_size=6))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(keys, inner, max_size=3)), max_leaves=6)
SPOTS = (("metadata",), ("spec",), ("spec", "template", "spec"), ("spec", "template", "spec", "domain"),
         ("spec", "template", "spec", "domain", "devices"))


@st.composite
def corpus_vms(draw):
    case = draw(st.sampled_from(GOOD))
    vm = copy.deepcopy(case["input"]["vm"])
    for spot in draw(st.lists(st.sampled_from(SPOTS), max_size=4)):
        node = vm
        for key in spot:
            node = node.setdefault(key, {})
        node[draw(keys)] = draw(values)
    labels = draw(st.dictionaries(keys, st.text(max_size=5), max_size=3))
    if labels:
        vm.setdefault("metadata", {}).setdefault("labels", {}).update(labels)
    return case, vm


def leaves(value, path=()):
    if isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from leaves(item, (*path, i))
    else:
        yield path, value


def lookup(doc, path):
    for part in path:
        doc = doc[part]
    return doc


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corpus_vms())
def test_expansion_is_idempotent_and_keeps_what_it_does_not_own(drawn):
    case, vm = drawn
    source = source_for(case["input"])
    before = copy.deepcopy(vm)
    flat = expand(vm, source)
    assert vm == before

    assert expand(flat, source) == flat
    again = copy.deepcopy(flat)
    default_template_spec(again)
    finish_expansion(again)
    assert again == flat
    _, preference = find_specs(vm, source)
    template = copy.deepcopy(flat["spec"]["template"])
    apply_preference(preference, template)
    assert template == flat["spec"]["template"]

    for path, value in leaves(vm):
        dotted = ".".join(map(str, path))
        # the matchers and their status refs are what expansion removes
        if dotted.startswith(("spec.instancetype", "spec.preference", "status.instancetypeRef",
                              "status.preferenceRef")) or OVERWRITTEN.match(dotted):
            continue
        assert lookup(flat, path) == value, dotted


JUNK = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=4), st.lists(st.integers(), max_size=2),
                 st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))
JUNK_SPOTS = (("status",), ("spec", "template", "metadata"), ("spec", "template", "spec", "volumes"),
              ("spec", "template", "spec", "networks"), ("spec", "template", "spec", "domain", "cpu"),
              ("spec", "template", "spec", "domain", "memory"),
              ("spec", "template", "spec", "domain", "devices", "disks"),
              ("spec", "template", "spec", "domain", "devices", "interfaces"),
              ("spec", "template", "spec", "domain", "resources"),
              ("spec", "template", "spec", "domain", "features"), ("spec", "instancetype", "kind"),
              ("spec", "preference", "name"), ("metadata", "namespace"))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(GOOD), st.sampled_from(JUNK_SPOTS), JUNK)
def test_mis_typed_data_gives_an_expand_error_never_a_crash(case, spot, junk):
    from instancetype_webhook.kubevirt.causes import ExpandError

    vm = copy.deepcopy(case["input"]["vm"])
    node = vm
    for key in spot[:-1]:
        node = node.setdefault(key, {})
        if not isinstance(node, dict):
            return
    node[spot[-1]] = junk
    try:
        result = expand(vm, source_for(case["input"]))
    except ExpandError as err:
        assert err.kind in ("conflict", "notFound", "badRequest", "schema") and err.message
    else:
        assert isinstance(result, dict)
