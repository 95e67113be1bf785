"""The project's version, written once in instancetype_webhook/_version.py, carried everywhere else it stands.

    python3 tools/version.py            # print the places that do not follow the version (exit 1 if any)
    python3 tools/version.py 0.2.0      # set the version, then write it into every place below

The places: the chart's version and appVersion, the kustomize manifests' image tag and the Deployment's
image, and the docs that show it. tests/ship/test_version.py runs the check.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "instancetype_webhook" / "_version.py"
VERSION = r"\d+\.\d+\.\d+(?:[-.+][0-9A-Za-z.-]+)?"
# (file, pattern with one group standing for the version)
PLACES = [
    ("charts/instancetype-webhook/Chart.yaml", rf"^version: ({VERSION})$"),
    ("charts/instancetype-webhook/Chart.yaml", rf'^appVersion: "({VERSION})"$'),
    ("webhook_config/kustomization.yaml", rf"^    newTag: ({VERSION})$"),
    ("webhook_config/deployment.yaml", rf"image: instancetype-webhook:({VERSION})$"),
    ("docs/install/index.md", rf"registry.example.com/instancetype-webhook:({VERSION}) "),
    ("docs/install/index.md", rf"registry.example.com/instancetype-webhook:({VERSION})$"),
]


def current() -> str:
    match = re.search(rf'__version__ = "({VERSION})"', SOURCE.read_text())
    if match is None:
        raise SystemExit(f"{SOURCE}: no __version__ found")
    return match.group(1)


def stale(version: str) -> list[str]:
    """The places whose version is not `version` (or where the pattern no longer matches)."""
    out = []
    for name, pattern in PLACES:
        found = re.findall(pattern, (ROOT / name).read_text(), flags=re.M)
        if not found:
            out.append(f"{name}: no version found by {pattern!r}")
        out += [f"{name}: {value} (want {version})" for value in found if value != version]
    return out


def write(version: str) -> None:
    text = SOURCE.read_text()
    SOURCE.write_text(re.sub(rf'__version__ = "{VERSION}"', f'__version__ = "{version}"', text))
    for name, pattern in PLACES:
        path = ROOT / name
        path.write_text(re.sub(pattern, lambda m: m.group(0).replace(m.group(1), version), path.read_text(),
                               flags=re.M))


def main(argv: list[str]) -> int:
    if argv:
        if not re.fullmatch(VERSION, argv[0]):
            print(f"error: {argv[0]!r} is not a version (MAJOR.MINOR.PATCH)", file=sys.stderr)
            return 2
        write(argv[0])
    problems = stale(current())
    for line in problems:
        print(line)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
