"""The instancetype stage of upstream's VM mutating webhook (virt-api `VMsMutator`, the
`pkg/instancetype/webhooks/vm` mutator), as a pure function.

    mutate_vm(vm, old_vm, source, settings, namespace) -> Mutation(verdict, vm, inferred)

Steps, in upstream's order (on CREATE and UPDATE):
1. the matcher checks (`instancetype_webhook.kubevirt.matchers.validate_matchers`; UPDATE compares with `old_vm`):
   a failure is a 422 with causes;
2. `inferFromVolume` for each matcher that has it (`instancetype_webhook.kubevirt.infer`), under its failure policy:
   a failure is a 400 with the error as message;
3. what the stage writes from the preference the VM now names (looked up like upstream's FindPreference:
   any lookup failure means no preference here; the validation and expansion report it later):
   preferred architecture, machine type and the DataVolumeTemplate storage class
   (`instancetype_webhook.kubevirt.preference.submission`).

The input is never changed: the returned VM shares its untouched parts (it is the input itself when the
stage changes nothing); it is None when the verdict denies.
Everything downstream (validation, expansion, the webhook's patch, audit and sweep) starts from it.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from instancetype_webhook.kubevirt.causes import ExpandError, Verdict
from instancetype_webhook.kubevirt.configuration import DEFAULT_SETTINGS, ClusterSettings
from instancetype_webhook.kubevirt.find import find_preference_spec
from instancetype_webhook.kubevirt.infer import InferenceError, Inferred, infer_matchers
from instancetype_webhook.kubevirt.matchers import validate_matchers
from instancetype_webhook.kubevirt.preference.submission import with_submission_preferences
from instancetype_webhook.kubevirt.rejection import error, reject
from instancetype_webhook.kubevirt.releases import ReleaseProfile
from instancetype_webhook.kubevirt.source import InMemorySource, KindNotServed, Source

__all__ = ["Mutation", "mutate_vm"]


class Mutation(NamedTuple):
    """The mutating webhook's verdict, and the VM as its instancetype stage leaves it (None when denied).

    `inferred` says which matchers `inferFromVolume` resolved, from which volume and object (for the
    provenance annotation); `verdict.warnings` mention a failure that `Ignore` swallowed. `matched` is
    the VM after the matcher checks and inference, before the preference's submission-time values
    (what flattening's imprint is measured from, so that a resize rewrites those values too).
    """

    verdict: Verdict
    vm: dict[str, Any] | None
    inferred: tuple[Inferred, ...] = ()
    matched: dict[str, Any] | None = None


def mutate_vm(
    vm: dict[str, Any],
    old_vm: Mapping[str, Any] | None = None,
    source: Source | None = None,
    settings: ClusterSettings = DEFAULT_SETTINGS,
    namespace: str | None = None,
) -> Mutation:
    """Upstream's VM mutator instancetype stage; `old_vm` only on UPDATE.

    `namespace` is the request's namespace, used when the VM carries none (lookups of namespaced objects).
    """
    causes = validate_matchers(vm, old_vm)
    if causes:
        return Mutation(reject(causes), None)
    source = source if source is not None else InMemorySource()
    namespace = _namespace(vm, namespace, source)
    try:
        inference = infer_matchers(vm, namespace, source, settings.release)
    except InferenceError as exc:
        return Mutation(error(exc.message), None)
    preference = _preference_spec(inference.vm, namespace, source, settings.release)
    mutated = with_submission_preferences(inference.vm, preference)
    return Mutation(Verdict.allow(inference.warnings), mutated, inference.inferred, inference.vm)


def _namespace(vm: Mapping[str, Any], namespace: str | None, source: Source) -> str:
    meta = vm.get("metadata")
    own = meta.get("namespace") if isinstance(meta, dict) else None
    if isinstance(own, str) and own:
        return own
    return namespace or getattr(source, "default_namespace", None) or "default"


def _preference_spec(vm: dict[str, Any], namespace: str, source: Source,
                     release: ReleaseProfile) -> Mapping[str, Any] | None:
    """FindPreference as the stage calls it, as the cluster's release (as expansion looks it up): any failure
    (missing, bad kind, bad revision) means none."""
    spec = vm.get("spec")
    if not isinstance(spec, dict) or spec.get("preference") is None:
        return None
    meta = vm.get("metadata")
    if not (isinstance(meta, dict) and meta.get("namespace")):
        vm = {**vm, "metadata": {**(meta if isinstance(meta, dict) else {}), "namespace": namespace}}
    try:
        return find_preference_spec(vm, source, release)
    except (ExpandError, KindNotServed):
        return None
