"""The inferFromVolume example (docs/guides/infer-from-volume.md), offline: `expand`/`validate` read the
volume objects from -f files and run the VM mutator's stage first (examples/infer/, examples/vm-create-infer.json)."""
from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests.kit.cli import run_main

ROOT = Path(__file__).resolve().parents[2]
VM, VOLUMES = str(ROOT / "examples/infer/vm.yaml"), str(ROOT / "examples/infer/volumes.yaml")


def test_expand_infers_from_the_datasource():
    code, out, err = run_main("expand", "-f", VM, "-f", VOLUMES, "-o", "json")
    assert code == 0, err
    flat = json.loads(out)
    named = yaml.safe_load(Path(VM).read_text())
    named["spec"]["instancetype"], named["spec"]["preference"] = {"name": "u1.medium"}, {"name": "fedora"}
    code, by_name, err = run_main("expand", "-f", "-", "-o", "json", stdin=json.dumps(named))
    assert code == 0, err
    assert flat == json.loads(by_name)
    assert flat["spec"]["template"]["spec"]["domain"]["memory"] == {"guest": "4Gi"}


def test_validate_and_the_missing_datasource():
    assert run_main("validate", "-f", VM, "-f", VOLUMES)[0] == 0
    code, _, err = run_main("expand", "-f", VM)
    assert code == 1
    assert 'datasources.cdi.kubevirt.io "fedora" not found' in err


def test_the_admission_review_example_carries_the_same_vm():
    review = json.loads((ROOT / "examples/vm-create-infer.json").read_text())
    assert review["request"]["object"] == yaml.safe_load(Path(VM).read_text())
