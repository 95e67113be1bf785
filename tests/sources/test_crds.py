"""sources.crds: the CRD schemas ship with the package, per release, and check every real VM clean."""
from __future__ import annotations

import json

import pytest
import yaml

from instancetype_webhook.kubevirt.releases import PROFILES, SCHEMA_ADDED
from instancetype_webhook.sources.crds import CRD_FILES, CRDS_DIR, crd, schema_for, unknown_fields_of
from tests.kit.shared_data import CONFORMANCE, ROOT, SHARED


def test_the_packaged_crds_are_the_shared_ones_byte_for_byte():
    shared = SHARED / "kubevirt-crds"
    for name in {*CRD_FILES.values(), "README.md"}:
        assert (CRDS_DIR / "main" / name).read_bytes() == (shared / name).read_bytes(), name
    assert {p.name for p in (CRDS_DIR / "main").iterdir()} == {p.name for p in shared.iterdir()}


def test_each_kind_names_the_file_that_defines_it():
    for kind in CRD_FILES:
        assert crd(kind)["spec"]["names"]["kind"] == kind


def test_the_package_data_line_ships_the_crds():
    text = (ROOT / "pyproject.toml").read_text()
    assert '"instancetype_webhook.sources" = ["kubevirt_crds/*/*.yaml", "kubevirt_crds/*/README.md"]' in text


def test_other_kinds_groups_and_versions_are_not_checked():
    assert unknown_fields_of({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "spec": {"x": 1}}) is None
    assert unknown_fields_of({"apiVersion": "example.com/v1", "kind": "VirtualMachine", "spec": {"x": 1}}) is None
    assert unknown_fields_of({"apiVersion": "kubevirt.io/v9", "kind": "VirtualMachine", "spec": {"x": 1}}) is None
    assert schema_for("kubevirt.io/v1alpha3", "VirtualMachine") is not None


TYPO = {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "metadata": {"name": "a"},
        "spec": {"template": {"spec": {"domain": {"cpu": {"guest": 4}, "devices": {}}}}}}


def test_the_cpu_guest_typo_is_found_at_its_path():
    assert unknown_fields_of(TYPO) == ["spec.template.spec.domain.cpu.guest"]


def test_preserve_unknown_subtrees_of_the_real_schema_accept_anything():
    vm = {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "metadata": {"name": "a"}, "spec": {
        "dataVolumeTemplates": [{"metadata": {"name": "d", "made": {"up": 1}}, "spec": {"source": {"blank": {}}}}],
        "template": {"metadata": {"labels": {"a": "b"}, "made": "up"},
                     "spec": {"domain": {"clock": {"utc": {}, "madeUp": {"x": 1}}, "devices": {}},
                              "nodeSelector": {"any.key/here": "v"}}}}}
    assert unknown_fields_of(vm) == []


def _objects(value):
    if isinstance(value, dict):
        if "kind" in value and "apiVersion" in value:
            yield value
        else:
            for item in value.values():
                yield from _objects(item)
    elif isinstance(value, list):
        for item in value:
            yield from _objects(item)


def test_every_conformance_and_example_object_is_known_to_main():
    checked = 0
    for path in sorted(CONFORMANCE.glob("*.json")):
        for obj in _objects(json.loads(path.read_text())["input"]):
            found = unknown_fields_of(obj)
            checked += found is not None
            assert not found, (path.name, found)
    for path in sorted((ROOT / "examples").rglob("*")):
        if path.suffix in (".json", ".yaml"):
            for doc in yaml.safe_load_all(path.read_text()):
                for obj in _objects(doc):
                    assert not unknown_fields_of(obj), path
    assert checked > 600  # VMs, instance types and preferences: the check ran on them


def _set(obj, path, value):
    node = obj
    *parents, last = path.replace("[]", "").split(".")
    for key in parents:
        if key in ("interfaces", "volumes", "networks", "dataVolumeTemplates"):
            node = node.setdefault(key, [{}])[0]
        else:
            node = node.setdefault(key, {})
    node[last] = value


@pytest.mark.parametrize(("kind", "api_kind"), [("vm", "VirtualMachine"),
                                                ("preference", "VirtualMachineClusterPreference")])
def test_a_field_only_a_newer_release_has_warns_on_the_older_one(kind, api_kind):
    group = "kubevirt.io/v1" if kind == "vm" else "instancetype.kubevirt.io/v1beta1"
    for since, path in SCHEMA_ADDED[kind]:
        obj = {"apiVersion": group, "kind": api_kind, "metadata": {"name": "a"}}
        _set(obj, path, "x")
        shown = path.replace("[]", "[0]")
        for line, profile in PROFILES.items():
            expected = [shown] if profile.release < since else []
            assert unknown_fields_of(obj, profile) == expected, (path, line)


def test_a_vmi_lacks_what_the_vm_template_lacks():
    vmi = {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance", "metadata": {"name": "a"},
           "spec": {"serviceAccountName": "sa", "domain": {"devices": {}}}}
    assert unknown_fields_of(vmi, PROFILES["main"]) == []
    assert unknown_fields_of(vmi, PROFILES["v1.8"]) == ["spec.serviceAccountName"]
