"""The generated pydantic models cover the CRD schemas and parse the whole common-instancetypes catalogue."""
from __future__ import annotations

import pytest
import yaml
from pydantic import ValidationError

from instancetype_webhook.catalog import CATALOG_DIR
from instancetype_webhook.kubevirt import models
from tests.kit.shared_data import SHARED


def catalogue_objects():
    out = []
    for path in sorted(CATALOG_DIR.glob("*.yaml")):
        out.extend(doc for doc in yaml.safe_load_all(path.read_text()) if doc)
    return out


def test_every_common_instancetypes_object_parses_without_pruning():
    objects = catalogue_objects()
    assert len(objects) > 100
    for obj in objects:
        parsed = models.parse_object(obj)
        assert parsed.kind == obj["kind"]
        assert models.pruned_fields(obj["spec"], parsed.spec) == [], obj["metadata"]["name"]
        assert parsed.spec.model_dump(by_alias=True, exclude_unset=True) == obj["spec"]


def _schema_paths(node, path=""):
    props = node.get("properties") or {}
    for key, child in props.items():
        where = f"{path}.{key}" if path else key
        yield where
        yield from _schema_paths(child, where)
        if child.get("items"):
            yield from _schema_paths(child["items"], where + "[]")


def _model_paths(model, path=""):

    for name, field in model.model_fields.items():
        alias = field.alias or name
        where = f"{path}.{alias}" if path else alias
        yield where
        for arg in _classes(field.annotation):
            inner = where + "[]" if _is_list(field.annotation) else where
            yield from _model_paths(arg, inner)


def _is_list(annotation):
    import typing

    return any(typing.get_origin(a) is list for a in [annotation, *typing.get_args(annotation)])


def _classes(annotation):
    import typing

    found = []
    stack = [annotation]
    while stack:
        a = stack.pop()
        if isinstance(a, type) and issubclass(a, models.CRDModel):
            found.append(a)
        stack.extend(typing.get_args(a))
    return found


@pytest.mark.parametrize("crd, spec_model", [
    ("virtualmachineclusterinstancetypes.instancetype.kubevirt.io.yaml", models.VirtualMachineInstancetypeSpec),
    ("virtualmachinepreferences.instancetype.kubevirt.io.yaml", models.VirtualMachinePreferenceSpec),
])
def test_every_crd_field_is_modelled(crd, spec_model):
    schema = yaml.safe_load((SHARED / "kubevirt-crds" / crd).read_text())["spec"]["versions"][0]["schema"]
    expected = set(_schema_paths(schema["openAPIV3Schema"]["properties"]["spec"]))
    assert expected == set(_model_paths(spec_model))


def test_unknown_fields_are_pruned_as_the_api_server_does():
    raw = {"kind": "VirtualMachineClusterPreference", "spec": {"cpu": {"preferredCPUTopology": "cores", "bogus": 1},
                                                               "alsoBogus": {"x": 1}}}
    parsed = models.parse_object(raw)
    assert parsed.spec.cpu.preferred_cpu_topology == "cores"
    assert models.pruned_fields(raw["spec"], parsed.spec) == ["cpu.bogus", "alsoBogus"]


@pytest.mark.parametrize("spec", [
    {"cpu": {"guest": "2"}, "memory": {"guest": "2Gi"}},            # string for an integer
    {"cpu": {"guest": 2}, "memory": {"guest": "2Gx"}},              # not a quantity
    {"cpu": {"guest": 2}, "memory": {"guest": "2Gi", "overcommitPercent": 101}},
    {"cpu": {"guest": 2}},                                           # memory is required
    {"cpu": {}, "memory": {"guest": "1Gi"}},                         # cpu.guest is required
    {"cpu": {"guest": 1}, "memory": {"guest": "1Gi"}, "gpus": [{"deviceName": "x"}]},  # gpu name required
])
def test_schema_violations_are_rejected(spec):
    with pytest.raises(ValidationError):
        models.VirtualMachineClusterInstancetype.model_validate({"spec": spec})


def test_preference_requirements_need_their_guest_fields():
    with pytest.raises(ValidationError):
        models.VirtualMachinePreference.model_validate({"spec": {"requirements": {"cpu": {}}}})
    ok = models.VirtualMachinePreference.model_validate({"spec": {"requirements": {"memory": {"guest": "1.5Gi"}}}})
    assert ok.spec.requirements.memory.guest == "1.5Gi"


def test_wrong_kind_is_refused():
    with pytest.raises(KeyError):
        models.parse_object({"kind": "VirtualMachine", "spec": {}})
    with pytest.raises(ValidationError):
        models.VirtualMachinePreference.model_validate({"kind": "VirtualMachineClusterPreference", "spec": {}})
