"""`inferFromVolume` on a VM's matchers (upstream `pkg/instancetype/infer/handler.go`).

    infer_matchers(vm, namespace, source, release) -> Inference(vm, inferred, warnings)   (raises InferenceError)

The instance type matcher first, then the preference matcher; a matcher without `inferFromVolume` is left
alone. On success the matcher is *replaced* by `{name, kind}` from the labels (its `inferFromVolume`,
failure policy and anything else go; an empty kind is omitted). On failure:
- `inferFromVolumeFailurePolicy: Ignore` and an ignorable error: the matcher is removed;
- otherwise the error is raised (the webhook denies with code 400 and the error as message).
Under `Ignore`, a *successful* instance type inference also removes `spec.template.spec.domain.memory`
(upstream keeps it only as the fallback for a failed inference); the preference's policy does not.

The input VM is never changed: the result shares every untouched part with it.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from instancetype_webhook.kubevirt.infer.errors import InferenceError
from instancetype_webhook.kubevirt.infer.volume import (
    INSTANCETYPE_LABELS,
    PREFERENCE_LABELS,
    Defaults,
    LabelPair,
    Origin,
    VolumeFollower,
)
from instancetype_webhook.kubevirt.releases import INFER_FROM_SNAPSHOTS, MAIN_PROFILE, ReleaseProfile
from instancetype_webhook.kubevirt.source import Source

IGNORE: Final = "Ignore"
MATCHERS: Final[tuple[tuple[str, LabelPair], ...]] = (("instancetype", INSTANCETYPE_LABELS),
                                                      ("preference", PREFERENCE_LABELS))


@dataclass(frozen=True)
class Inferred:
    """One matcher that was inferred: from which volume, and which object's labels named it."""

    matcher: str  # "instancetype" | "preference"
    volume: str
    origin: Origin

    def to_dict(self) -> dict[str, str]:
        return {"volume": self.volume, **self.origin.to_dict()}


@dataclass(init=False)
class Inference:
    vm: dict[str, Any]
    inferred: tuple[Inferred, ...]
    warnings: list[str]

    # __init__ written out: the compiled build runs a dataclass's generated __init__ as Python (5x the cost)
    def __init__(self, vm: dict[str, Any], inferred: tuple[Inferred, ...] = (),
                 warnings: list[str] | None = None) -> None:
        self.vm = vm
        self.inferred = inferred
        self.warnings = [] if warnings is None else warnings


class _MemoSource:
    """One request's lookups, each made once (both matchers usually follow the same volume)."""

    def __init__(self, source: Source):
        self._source = source
        self._seen: dict[tuple[str, str, str | None], Any] = {}

    def get(self, kind: str, name: str, namespace: str | None = None) -> Any:
        key = (kind, name, namespace)
        if key not in self._seen:
            self._seen[key] = self._source.get(kind, name, namespace)
        return self._seen[key]

    def get_revision(self, name: str, namespace: str) -> Any:
        return self._source.get_revision(name, namespace)


def needs_inference(vm: Mapping[str, Any]) -> bool:
    spec = vm.get("spec")
    if not isinstance(spec, dict):
        return False
    return any(isinstance(spec.get(key), dict) and spec[key].get("inferFromVolume") for key, _ in MATCHERS)


def infer_matchers(vm: dict[str, Any], namespace: str, source: Source,
                   release: ReleaseProfile = MAIN_PROFILE) -> Inference:
    """The VM with its `inferFromVolume` matchers resolved (see the module docstring), as `release` follows
    volumes (VolumeSnapshot sources from v1.9: `INFER_FROM_SNAPSHOTS`)."""
    result = Inference(vm)
    if not needs_inference(vm):
        return result
    memo = _MemoSource(source)
    snapshots = release.has(INFER_FROM_SNAPSHOTS)
    inferred: list[Inferred] = []
    for key, labels in MATCHERS:
        matcher = result.vm["spec"].get(key)
        if not isinstance(matcher, dict) or not matcher.get("inferFromVolume"):
            continue
        volume = str(matcher["inferFromVolume"])
        ignore = matcher.get("inferFromVolumeFailurePolicy") == IGNORE
        try:
            found = VolumeFollower(result.vm, namespace, memo, labels, snapshots).defaults(volume)
        except InferenceError as exc:
            if not (exc.ignorable and ignore):
                raise
            result.vm = _with_spec(result.vm, key, None)
            result.warnings.append(f"spec.{key}: inferFromVolume {volume} failed and was ignored "
                                   f"(inferFromVolumeFailurePolicy Ignore), so the matcher was removed: {exc.message}")
            continue
        result.vm = _with_spec(result.vm, key, _matcher(found))
        if ignore and key == "instancetype":
            result.vm = _without_memory(result.vm)
        inferred.append(Inferred(key, volume, found.origin))
    result.inferred = tuple(inferred)
    return result


def _matcher(found: Defaults) -> dict[str, str]:
    """The new matcher as upstream serialises it (`omitempty` on name and kind)."""
    out: dict[str, str] = {}
    if found.name:
        out["name"] = found.name
    if found.kind:
        out["kind"] = found.kind
    return out


def _with_spec(vm: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    """A copy of `vm` whose spec has `key` set to `value` (removed when None)."""
    spec = {k: v for k, v in vm["spec"].items() if k != key}
    if value is not None:
        spec = {**vm["spec"], key: value}
    return {**vm, "spec": spec}


def _without_memory(vm: dict[str, Any]) -> dict[str, Any]:
    template = vm["spec"].get("template")
    template_spec = template.get("spec") if isinstance(template, dict) else None
    if not isinstance(template_spec, dict):
        return vm
    domain = template_spec.get("domain")
    if not isinstance(domain, dict) or "memory" not in domain:
        return vm
    domain = {k: v for k, v in domain.items() if k != "memory"}
    return {**vm, "spec": {**vm["spec"], "template": {**template, "spec": {**template_spec, "domain": domain}}}}
