"""The in-tree copy (tests/data/shared) equals ../shared, and tools/sync_shared.py keeps it so."""
from __future__ import annotations

import subprocess
import sys

import pytest

from tests.kit.shared_data import ROOT, SHARED, original_shared, sync_tool

TOOL = ROOT / "tools" / "sync_shared.py"


def test_copy_equals_shared():
    shared = original_shared()
    if shared is None:
        pytest.skip("no ../shared beside this clone (set INSTANCETYPE_WEBHOOK_SHARED to check the copy)")
    changes = sync_tool.compare(shared, SHARED)
    assert not changes, (f"tests/data/shared differs from {shared}; run `make sync-shared`:\n"
                         + "\n".join(changes.lines()))


def test_copy_has_what_the_tests_read():
    for rel in ("conformance/README.md", "kubevirt-crds/virtualmachines.kubevirt.io.yaml",
                "cdi-crds/datavolumes.cdi.kubevirt.io.yaml",
                "snapshot-crds/snapshot.storage.k8s.io_volumesnapshots.yaml",
                "common-instancetypes/common-clusterinstancetypes-bundle.yaml", "tools/libvirt-check.sh"):
        assert (SHARED / rel).is_file(), rel
    assert len(list((SHARED / "conformance").glob("*.json"))) >= 200


def _tree(tmp_path, files: dict[str, str]):
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


def test_sync_reports_and_applies_added_changed_removed(tmp_path):
    shared = _tree(tmp_path / "shared", {"conformance/a.json": "{}", "conformance/b.json": "[1]",
                                         "kubevirt-crds/x.yaml": "x: 1", "hooks/ignored.sh": "not mirrored"})
    copy = _tree(tmp_path / "copy", {"conformance/a.json": "{}", "conformance/b.json": "[0]",
                                     "cdi-crds/old/gone.yaml": "y: 2"})
    before = sync_tool.compare(shared, copy)
    assert before.lines() == ["D cdi-crds/old/gone.yaml", "M conformance/b.json", "A kubevirt-crds/x.yaml"]
    assert sync_tool.sync(shared, copy).summary() == "1 added, 1 changed, 1 removed"
    assert not sync_tool.compare(shared, copy)
    assert (copy / "conformance/b.json").read_text() == "[1]"
    assert not (copy / "cdi-crds").exists() and not (copy / "spec").exists()


def test_command_check_mode_and_missing_shared(tmp_path):
    shared = _tree(tmp_path / "shared", {"conformance/a.json": "{}"})
    check = subprocess.run([sys.executable, str(TOOL), "--from", str(shared), "--check"], capture_output=True,
                           text=True)
    assert check.returncode == 1  # the repository's copy has far more files than this one-file tree
    assert "A conformance/a.json" in check.stdout.splitlines()
    assert check.stdout.splitlines()[-1].startswith(f"tests/data/shared differ from {shared}: 1 added, 0 changed, ")
    assert not (SHARED / "conformance/a.json").exists()  # --check changed nothing
    missing = subprocess.run([sys.executable, str(TOOL), "--from", str(tmp_path / "nope")], capture_output=True,
                             text=True)
    assert missing.returncode == 2 and "no shared directory" in missing.stderr
