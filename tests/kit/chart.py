"""The chart as Helm installs it, offline: `helm install --dry-run=client` through helm-python-sdk (Helm's own Go
engine), for the chart tests and the deployment tests built on it."""
from __future__ import annotations

from pathlib import Path

import helm_python as helm

from tests.kit.ship_checks import Wiring, load_documents

ROOT = Path(__file__).resolve().parents[2]  # the repository
CHART = ROOT / "charts" / "instancetype-webhook"
RELEASE, NAMESPACE = "itw", "virt-admission"
FULLNAME = "itw-instancetype-webhook"
WIRING = Wiring(namespace=NAMESPACE, service=FULLNAME)
CERT_MANAGER = {"tls": {"source": "cert-manager"}}


def install(values: dict | None = None) -> tuple[list[dict], str]:
    """`helm install --dry-run=client`: the manifest and NOTES Helm would apply, no cluster contacted."""
    config = helm.Config(namespace=NAMESPACE, storage_driver="memory")
    try:
        release = config.install(str(CHART), RELEASE, values, namespace=NAMESPACE, dry_run="client")
    finally:
        config.close()
    return load_documents(release["manifest"]), release["notes"]
