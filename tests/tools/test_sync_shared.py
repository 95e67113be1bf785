"""tools/sync_shared.py's second copy: the common-instancetypes bundles of each release that the package ships."""
from __future__ import annotations

from tests.kit.shared_data import ROOT, original_shared, sync_tool


def _tree(base, files: dict[str, str]):
    for rel, text in files.items():
        (base / rel).parent.mkdir(parents=True, exist_ok=True)
        (base / rel).write_text(text)
    return base


def test_the_packaged_bundles_are_synced_added_changed_and_removed(tmp_path):
    shared = _tree(tmp_path / "shared", {"common-instancetypes/releases/v1.8.4/a.yaml": "a: 2",
                                         "common-instancetypes/releases/v1.9.0/b.yaml": "b: 1"})
    target = _tree(tmp_path / "pkg" / "releases", {"v1.8.4/a.yaml": "a: 1", "v1.7.4/old.yaml": "x: 1"})
    packaged = (("common-instancetypes/releases", target),)
    assert sync_tool.compare_packaged(shared, packaged).lines() == [
        "D releases/v1.7.4/old.yaml", "M releases/v1.8.4/a.yaml", "A releases/v1.9.0/b.yaml"]
    assert sync_tool.sync_packaged(shared, packaged).summary() == "1 added, 1 changed, 1 removed"
    assert not sync_tool.compare_packaged(shared, packaged)
    assert (target / "v1.8.4/a.yaml").read_text() == "a: 2" and not (target / "v1.7.4/old.yaml").exists()


def test_a_shared_directory_without_the_bundles_changes_nothing(tmp_path):
    target = _tree(tmp_path / "pkg" / "releases", {"v1.8.4/a.yaml": "a: 1"})
    assert not sync_tool.sync_packaged(_tree(tmp_path / "shared", {"conformance/a.json": "{}"}),
                                       (("common-instancetypes/releases", target),))
    assert (target / "v1.8.4/a.yaml").is_file()


def test_the_package_ships_the_in_tree_copy_of_the_bundles():
    copy = ROOT / "tests" / "data" / "shared"
    assert not sync_tool.compare_packaged(original_shared() or copy)
    assert not sync_tool.compare_packaged(copy)
