"""Answering as one KubeVirt release in a test: the settings of a release (with a configuration), and the
release just before a change and the first one with it (both sides of every entry of `releases.CHANGES`)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from instancetype_webhook.kubevirt.configuration import ClusterSettings, settings_from_configuration
from instancetype_webhook.kubevirt.releases import CHANGES, LINES, ReleaseProfile, resolve

_BEFORE = {"v1.8.0": "v1.7.4", "v1.8.3": "v1.8.2", "v1.9.0": "v1.8.4", "main": "v1.9.0"}


def settings_as(version: str, configuration: Mapping[str, Any] | None = None,
                feature_gates: tuple[str, ...] = ()) -> ClusterSettings:
    """The settings of KubeVirt `version` (`v1.8.4`, `main`), with `configuration` (a KubeVirt CR's
    spec.configuration) and `feature_gates` listed in its developerConfiguration.featureGates."""
    config: dict[str, Any] = dict(configuration or {})
    if feature_gates:
        developer = dict(config.get("developerConfiguration") or {})
        developer["featureGates"] = [*(developer.get("featureGates") or ()), *feature_gates]
        config["developerConfiguration"] = developer
    return settings_from_configuration(config, release=resolve(version))


def sides(change: str) -> tuple[ReleaseProfile, ReleaseProfile]:
    """(the last release without `change`, the first release with it), as profiles."""
    since = next(c.since for c in CHANGES if c.name == change)
    first = "main" if since >= LINES["main"] else str(since)
    before, after = resolve(_BEFORE[first]), resolve(first)
    assert not before.has(change) and after.has(change)
    return before, after
