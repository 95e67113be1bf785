#!/usr/bin/env python3
"""Keep tests/data/shared/ (the in-tree copy of the shared data the tests read) equal to ../shared.

    python3 tools/sync_shared.py [--from DIR] [--check]

Copies the folders in MIRRORED from the shared directory into tests/data/shared/ (same layout),
deletes copied files that no longer exist there, and prints one line per added (A), changed (M)
or removed (D) file, then a summary. The common-instancetypes bundles of each KubeVirt release
(PACKAGED) are copied into the package too (instancetype_webhook/catalog/releases/), which ships them.
`--check` changes nothing and exits 1 when the copies differ.
The shared directory is --from DIR, else $INSTANCETYPE_WEBHOOK_SHARED, else `shared` beside the
repository (or beside the main checkout when this is a git worktree). Standard library only.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COPY = ROOT / "tests" / "data" / "shared"
ENV = "INSTANCETYPE_WEBHOOK_SHARED"
# The folders of shared/ that the tests (and the runner's bundled default) read.
MIRRORED = (
    "conformance",
    "conformance-releases",
    "kubevirt-crds",
    "cdi-crds",
    "snapshot-crds",
    "common-instancetypes",
    "kubevirt-testdata",
    "tools",
    "policyreport-crds",
    "spec",
    "bench",
)
# shared folder -> where the package ships the same files (only when shared has that folder)
PACKAGED = (("common-instancetypes/releases", ROOT / "instancetype_webhook" / "catalog" / "releases"),)


@dataclass
class Changes:
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.added or self.changed or self.removed)

    def lines(self) -> list[str]:
        marked = [("A", p) for p in self.added] + [("M", p) for p in self.changed] + [("D", p) for p in self.removed]
        return [f"{mark} {path}" for mark, path in sorted(marked, key=lambda item: item[1])]

    def summary(self) -> str:
        return f"{len(self.added)} added, {len(self.changed)} changed, {len(self.removed)} removed"


def _main_checkout(root: Path) -> Path | None:
    """The main working tree when `root` is a git worktree (its `shared` sits beside that one)."""
    try:
        common = subprocess.run(["git", "-C", str(root), "rev-parse", "--path-format=absolute", "--git-common-dir"],
                                capture_output=True, text=True, timeout=10, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return Path(common).parent if common else None


def find_shared(root: Path = ROOT) -> Path | None:
    """The shared directory to mirror, or None when there is none (a user's clone)."""
    if os.environ.get(ENV):
        return Path(os.environ[ENV])
    candidates = [root.parent / "shared"]
    main = _main_checkout(root)
    if main is not None:
        candidates.append(main.parent / "shared")
    return next((c for c in candidates if (c / "conformance").is_dir()), None)


def _files(base: Path) -> dict[str, Path]:
    """Every file under the mirrored folders of `base`, keyed by its path relative to `base`."""
    found = {}
    for folder in MIRRORED:
        top = base / folder
        if top.is_dir():
            for path in top.rglob("*"):
                if path.is_file():
                    found[path.relative_to(base).as_posix()] = path
    return found


def compare(shared: Path, copy: Path = COPY) -> Changes:
    """What syncing would do: files of `shared` missing in `copy`, different, or only in `copy`."""
    theirs, ours = _files(shared), _files(copy)
    changes = Changes()
    for rel, path in theirs.items():
        if rel not in ours:
            changes.added.append(rel)
        elif path.read_bytes() != ours[rel].read_bytes():
            changes.changed.append(rel)
    changes.removed = [rel for rel in ours if rel not in theirs]
    return changes


def sync(shared: Path, copy: Path = COPY) -> Changes:
    """Make `copy` equal to `shared` (mirrored folders only); returns what changed."""
    changes = compare(shared, copy)
    for rel in changes.added + changes.changed:
        source, target = shared / rel, copy / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(source.read_bytes())
        target.chmod(0o755 if os.access(source, os.X_OK) or rel.endswith(".sh") else 0o644)
    for rel in changes.removed:
        (copy / rel).unlink()
    for folder in (copy / name for name in MIRRORED if (copy / name).is_dir()):  # folders emptied by removals
        for path in sorted([folder, *folder.rglob("*")], reverse=True):
            if path.is_dir() and not any(path.iterdir()):
                path.rmdir()
    return changes


def _tree_files(top: Path) -> dict[str, Path]:
    return {p.relative_to(top).as_posix(): p for p in top.rglob("*") if p.is_file()} if top.is_dir() else {}


def compare_packaged(shared: Path, packaged: tuple[tuple[str, Path], ...] = PACKAGED) -> Changes:
    """What syncing the package's copies would do (paths relative to the package folder's parent)."""
    changes = Changes()
    for folder, target in packaged:
        if not (shared / folder).is_dir():
            continue
        theirs, ours = _tree_files(shared / folder), _tree_files(target)
        label = target.name
        for rel, path in theirs.items():
            if rel not in ours:
                changes.added.append(f"{label}/{rel}")
            elif path.read_bytes() != ours[rel].read_bytes():
                changes.changed.append(f"{label}/{rel}")
        changes.removed += [f"{label}/{rel}" for rel in ours if rel not in theirs]
    return changes


def sync_packaged(shared: Path, packaged: tuple[tuple[str, Path], ...] = PACKAGED) -> Changes:
    """Make the package's copies equal to shared's folders; returns what changed."""
    changes = compare_packaged(shared, packaged)
    for folder, target in packaged:
        if not (shared / folder).is_dir():
            continue
        for rel, path in _tree_files(shared / folder).items():
            destination = target / rel
            if not destination.is_file() or destination.read_bytes() != path.read_bytes():
                destination.parent.mkdir(parents=True, exist_ok=True)
                destination.write_bytes(path.read_bytes())
                destination.chmod(0o644)
        for rel in _tree_files(target):
            if not (shared / folder / rel).is_file():
                (target / rel).unlink()
    return changes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--from", dest="shared", metavar="DIR",
                        help=f"the shared directory (default: ${ENV} or ../shared)")
    parser.add_argument("--check", action="store_true", help="only report differences; exit 1 when there are any")
    args = parser.parse_args(argv)
    shared = Path(args.shared) if args.shared else find_shared()
    if shared is None or not (shared / "conformance").is_dir():
        where = shared or ROOT.parent / "shared"
        print(f"error: no shared directory at {where} (give --from DIR or set {ENV})", file=sys.stderr)
        return 2
    packaged = compare_packaged(shared) if args.check else sync_packaged(shared)
    for line in packaged.lines():
        print(f"{line} (package: instancetype_webhook/catalog)")
    changes = compare(shared) if args.check else sync(shared)
    for line in changes.lines():
        print(line)
    verb = "differ from" if args.check else "synced from"
    print(f"tests/data/shared {verb} {shared}: {changes.summary()}" if changes
          else f"tests/data/shared equals {shared}")
    return 1 if args.check and (changes or packaged) else 0


if __name__ == "__main__":
    sys.exit(main())
