"""The bundled common-instancetypes catalogues (cluster instance types and preferences; see NOTICE): the
bundle each KubeVirt release line's virt-operator deploys, for answers given without a cluster.

    BUNDLES[line] -> Bundle       line: "v1.7", "v1.8", "v1.9" or "main" (kubevirt.releases' release lines)

`CATALOG_DIR` holds the project's own bundle (common-instancetypes v1.6.0-90-g7c1e305b, the one the
conformance corpus was built with), used when answering as `main`; `releases/<release>/` the files copied unchanged
from that KubeVirt release's source tree (releases/README.md).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

CATALOG_DIR = Path(__file__).resolve().parent
RELEASES_DIR = CATALOG_DIR / "releases"


@dataclass(frozen=True)
class Bundle:
    """One bundle: its common-instancetypes version (the objects' `common-instancetypes-version` label),
    the folder its YAML files are in (that folder only), and which KubeVirt deploys it."""
    version: str
    directory: Path
    deployed_by: str

    def files(self) -> list[Path]:
        return sorted(self.directory.glob("*.yaml"))

    def describe(self) -> str:
        """`common-instancetypes v1.6.0 (the bundle KubeVirt v1.8.x deploys)`."""
        return f"common-instancetypes {self.version} ({self.deployed_by})"


BUNDLES: dict[str, Bundle] = {
    "v1.7": Bundle("v1.5.1", RELEASES_DIR / "v1.7.4", "the bundle KubeVirt v1.7.x deploys"),
    "v1.8": Bundle("v1.6.0", RELEASES_DIR / "v1.8.4", "the bundle KubeVirt v1.8.x deploys"),
    "v1.9": Bundle("v1.7.0", RELEASES_DIR / "v1.9.0", "the bundle KubeVirt v1.9.x deploys"),
    "main": Bundle("v1.6.0-90-g7c1e305b", CATALOG_DIR, "the project's bundle, used when answering as main"),
}

__all__ = ["BUNDLES", "CATALOG_DIR", "RELEASES_DIR", "Bundle"]
