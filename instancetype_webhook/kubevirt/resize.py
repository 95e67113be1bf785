"""Resize a flat VM by naming an instance type and/or a preference.

    resize(vm, source, settings=DEFAULT_SETTINGS, old_vm=None, handwritten=True) -> Resized

`vm` is a flat VirtualMachine that now names a new instance type and/or preference in
`spec.instancetype` / `spec.preference` (and carries `metadata.namespace` for the lookups).
`old_vm` is the stored object; its provenance annotation is used when `vm` lost its own.

- With a provenance annotation holding an imprint (`instancetype_webhook.kubevirt.imprint`): every value the
  previous flattening wrote and the VM still holds is taken out, a matcher the VM does not name
  again is restored from the provenance entries, and the result is validated and expanded as any
  VM with matchers. The law: for a VM `V`, resizing `flatten(V with A)` to `B` gives `flatten(V with
  B)`. A value the previous instance type wrote that the owner changed by hand stays; if the new
  instance type conflicts on it, the conflict (upstream's cause) names both values.
- Without one (a VM written flat by hand, or flattened before imprints were recorded): with
  `handwritten`, every field the new instance type conflicts on (upstream's conflict set:
  CPU counts and topology, model, dedicated CPUs, memory guest and hugepages, ...) is removed,
  and each replaced value is a warning (`cpu.sockets 7 -> 8`). Without `handwritten`, upstream's
  conflict stands.

`Resized.checked` is what `instancetype_webhook.kubevirt.check_expand.check_and_expand` answers for `Resized.base` (the
unflattened VM that was expanded), with conflict messages that name the values. No I/O beyond the
Source; inputs are never changed.
"""
from __future__ import annotations

from typing import Any, Final, NamedTuple

import orjson

from instancetype_webhook.kubevirt.causes import Cause, ExpandError, Verdict
from instancetype_webhook.kubevirt.check_expand import Checked, check_and_expand
from instancetype_webhook.kubevirt.configuration import DEFAULT_SETTINGS, ClusterSettings
from instancetype_webhook.kubevirt.expand import apply_specs, find_specs
from instancetype_webhook.kubevirt.imprint import Edit, read_provenance, strip, value_at
from instancetype_webhook.kubevirt.jsondata import clone_tree
from instancetype_webhook.kubevirt.rejection import reject
from instancetype_webhook.kubevirt.source import Source

__all__ = ["Replacement", "Resized", "matcher", "matchers_changed", "named", "resize"]

BASE: Final = "spec.template.spec."
DOMAIN: Final = BASE + "domain."
MAX_ROUNDS: Final = 16  # memory reports one conflict at a time; the conflict set has 20 fields
MAX_WARNING: Final = 120
_UNSET: Final = object()
# conflict path token -> VMI JSON key (upstream names the path after the instance type field)
_JSON_KEYS: Final = {"dedicatedCPUPlacement": "dedicatedCpuPlacement"}


class Replacement(NamedTuple):
    """A hand-written value the new instance type replaced (`new` is None when it sets none)."""

    field: str
    old: Any
    new: Any


class Resized(NamedTuple):
    checked: Checked
    base: dict[str, Any]
    replaced: list[Replacement]
    warnings: list[str]


def _dict(value: Any) -> dict[str, Any]:
    return value if type(value) is dict else {}


def matcher_ref(matcher: Any) -> tuple[str, str] | None:
    """(kind, name) a matcher names, kinds compared without case and empty meaning the cluster kind."""
    if type(matcher) is not dict or not matcher.get("name"):
        return None
    return (str(matcher.get("kind") or "").lower().rstrip("s"), str(matcher["name"]))


def _same_ref(new: Any, old: Any, cluster_kind: str) -> bool:
    a, b = matcher_ref(new), matcher_ref(old)
    if a is None or b is None:
        return a == b
    return (a[0] or cluster_kind, a[1]) == (b[0] or cluster_kind, b[1])


def matchers_changed(vm: dict[str, Any], old_vm: Any) -> bool:
    """Whether `vm` names an instance type or preference (by name) the stored `old_vm` did not reference."""
    spec, old_spec = _dict(vm.get("spec")), _dict(_dict(old_vm).get("spec"))
    for key, cluster_kind in (("instancetype", "virtualmachineclusterinstancetype"),
                              ("preference", "virtualmachineclusterpreference")):
        if matcher_ref(spec.get(key)) and not _same_ref(spec.get(key), old_spec.get(key), cluster_kind):
            return True
    return False


def matcher(value: str) -> dict[str, str]:
    """`NAME` or `KIND/NAME` (the CLI's and /preview's way of naming a size) as a matcher."""
    kind, _, name = value.rpartition("/")
    return {"kind": kind, "name": name} if kind else {"name": name}


def named(vm: dict[str, Any], instancetype: str | None = None, preference: str | None = None) -> dict[str, Any]:
    """`vm` naming a new instance type and/or preference (a shallow copy)."""
    spec = dict(_dict(vm.get("spec")))
    if instancetype:
        spec["instancetype"] = matcher(instancetype)
    if preference:
        spec["preference"] = matcher(preference)
    return {**vm, "spec": spec}


def _restored_matcher(entry: Any) -> dict[str, Any] | None:
    """The matcher a provenance entry describes (kind, name, pinned revision)."""
    if type(entry) is not dict or not entry.get("name"):
        return None
    matcher: dict[str, Any] = {"name": entry["name"]}
    if entry.get("kind"):
        matcher["kind"] = entry["kind"]
    if entry.get("revision"):
        matcher["revisionName"] = entry["revision"]
    return matcher


def _since_flattening(key: str, entry: dict[str, Any], source: Source, vm: dict[str, Any]) -> list[str]:
    """A warning when the recorded object a resize re-applies is gone or changed since the VM was flattened."""
    kind, name = entry.get("kind"), str(entry["name"])[:40]
    if entry.get("revision") or type(kind) is not str or not kind:
        return []
    try:
        obj = source.get(kind, name, _dict(vm.get("metadata")).get("namespace"))
    except Exception:  # noqa: BLE001 - the expansion reports lookup problems
        return []
    label = "instance type" if key == "instancetype" else "preference"
    if obj is None:
        return [f"the {label} {name} this VM was flattened with is gone: name one to resize"[:MAX_WARNING]]
    meta = _dict(obj.get("metadata"))
    was = (entry.get("uid"), entry.get("generation"))
    now = (meta.get("uid"), meta.get("generation"))
    if was != (None, None) and was != now:
        return [f"the {label} {name} changed since this VM was flattened (generation {was[1]} -> {now[1]}): "
                f"its current spec applies"[:MAX_WARNING]]
    return []


def resize(vm: dict[str, Any], source: Source, settings: ClusterSettings = DEFAULT_SETTINGS,
           old_vm: dict[str, Any] | None = None, handwritten: bool = True) -> Resized:
    recorded = read_provenance(vm) or read_provenance(old_vm)
    if recorded is not None and ("set" in recorded or "replaced" in recorded):
        return _resize_recorded(vm, recorded, source, settings)
    base = {**vm, "spec": clone_tree(_dict(vm.get("spec")))}
    replaced = _replace_conflicts(base, source, settings) if handwritten else []
    checked = check_and_expand(base, source, settings)
    return Resized(checked, base, replaced, _replacement_warnings(replaced, checked.flat, base))


def _resize_recorded(vm: dict[str, Any], recorded: dict[str, Any], source: Source,
                     settings: ClusterSettings) -> Resized:
    """The provenance path: take the imprint out, restore the matchers not named again, flatten.

    A DataVolumeTemplate's storage class stays: upstream's VM mutator fills in the preferred storage class only
    where a template has none, so on the resize UPDATE it sees the class the old preference wrote and keeps it."""
    base, edits = strip(vm, _without_template_storage(recorded))
    spec = base["spec"]
    notes: list[str] = []
    for key in ("instancetype", "preference"):
        matcher = _restored_matcher(recorded.get(key)) if spec.get(key) is None else None
        if matcher is not None:
            spec[key] = matcher
            notes += _since_flattening(key, recorded[key], source, base)
    checked = check_and_expand(base, source, settings)
    return Resized(_named(checked, base, edits, recorded), base, [], [*notes, *_kept_warnings(edits, checked)])


def _without_template_storage(recorded: dict[str, Any]) -> dict[str, Any]:
    set_ = recorded.get("set")
    if type(set_) is not dict:
        return recorded
    kept = {k: v for k, v in set_.items() if not k.startswith("/spec/dataVolumeTemplates/")}
    return {**recorded, "set": kept}


# ---- the hand-written path ------------------------------------------------------------------------

def _replace_conflicts(base: dict[str, Any], source: Source, settings: ClusterSettings) -> list[Replacement]:
    """Remove every field the instance type conflicts on from `base` (in place); the removed values."""
    try:
        instancetype, preference = find_specs(base, source, settings.release)
    except Exception:  # noqa: BLE001 - a lookup problem is answered by check_and_expand
        return []
    if instancetype is None:
        return []
    removed: list[Replacement] = []
    for _ in range(MAX_ROUNDS):
        try:
            _, causes = apply_specs(base, instancetype, preference, settings)
        except ExpandError:
            break
        taken = [(c.field, _remove_field(base, c.field)) for c in causes]
        taken = [(f, old) for f, old in taken if old is not _UNSET]
        if not taken:
            break
        removed += [Replacement(f, old, None) for f, old in taken]
    return removed


def _field_tokens(field: str) -> tuple[list[str], str] | None:
    """(tokens from spec.template, last key) of a conflict path, or None when it is not one."""
    if field.startswith("annotations."):
        return ["metadata", "annotations"], field[len("annotations."):]
    if not field.startswith(BASE):
        return None
    tokens = ["spec", *(_JSON_KEYS.get(t, t) for t in field[len(BASE):].split("."))]
    return tokens[:-1], tokens[-1]


def _remove_field(vm: dict[str, Any], field: str) -> Any:
    """Remove a conflict path from the VM (in place), pruning objects it leaves empty; the old value."""
    where = _field_tokens(field)
    if where is None:
        return _UNSET
    parents, last = where
    chain = [vm["spec"]["template"]]
    for token in parents:
        node = chain[-1].get(token)
        if type(node) is not dict:
            return _UNSET
        chain.append(node)
    if last not in chain[-1]:
        return _UNSET
    old = chain[-1].pop(last)
    for depth in range(len(chain) - 1, 2, -1):  # never prune template, its spec or domain
        if chain[depth]:
            break
        chain[depth - 1].pop(parents[depth - 1], None)
    return old


def _value_at(vm: dict[str, Any] | None, field: str) -> Any:
    where = _field_tokens(field)
    if vm is None or where is None:
        return _UNSET
    node: Any = _dict(_dict(vm.get("spec")).get("template"))
    for token in [*where[0], where[1]]:
        if type(node) is not dict or token not in node:
            return _UNSET
        node = node[token]
    return node


def short_field(field: str) -> str:
    for prefix in (DOMAIN, BASE):
        if field.startswith(prefix):
            return field[len(prefix):]
    return field


def show(value: Any, limit: int = 40) -> str:
    if value is _UNSET or value is None:
        return "(unset)"
    text = value if type(value) is str else orjson.dumps(value).decode()
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _replacement_warnings(replaced: list[Replacement], flat: dict[str, Any] | None,
                          base: dict[str, Any]) -> list[str]:
    if not replaced:
        return []
    name = (_dict(base["spec"].get("instancetype")).get("name") or "the instance type")[:40]
    warnings = []
    for r in replaced:
        new = _value_at(flat, r.field)
        if type(new) is type(r.old) and new == r.old:
            continue  # the same value again: nothing the owner would miss
        text = f"{name} replaced hand-written {short_field(r.field)} {show(r.old)} -> {show(new)}"
        warnings.append(text[:MAX_WARNING])
    return warnings


# ---- the provenance path --------------------------------------------------------------------------

def _matches(cause_field: str, edit: Edit) -> bool:
    field = edit.field
    if cause_field.startswith("annotations."):
        field = field.replace("spec.template.metadata.annotations.", "annotations.", 1)
    field = field.replace("dedicatedCpuPlacement", "dedicatedCPUPlacement")
    return field == cause_field or field.startswith((cause_field + ".", cause_field + "["))


def _named_cause(cause: Cause, base: dict[str, Any], edits: list[Edit], previous: str) -> Cause:
    if not cause.field:
        return cause
    for edit in edits:
        if _matches(cause.field, edit):
            note = f"{show(edit.current)} was set by hand, {previous} had set {show(edit.recorded)}"
            return Cause(cause.reason, f"{cause.message}: {note}", cause.field)
    current = _value_at(base, cause.field)
    if current is _UNSET:
        return cause
    return Cause(cause.reason, f"{cause.message}: the VM sets {show(current)}", cause.field)


def _named(checked: Checked, base: dict[str, Any], edits: list[Edit], recorded: dict[str, Any]) -> Checked:
    """`checked` with conflict messages naming the VM's value (and, for a hand edit, the recorded one)."""
    previous = str(_dict(recorded.get("instancetype")).get("name") or "the previous flattening")[:40]
    verdict, error = checked.verdict, checked.error
    if not verdict.allowed and verdict.causes and verdict.code == 422:
        verdict = _with_warnings(reject([_named_cause(c, base, edits, previous) for c in verdict.causes]), verdict)
    if error is not None and error.kind == "conflict" and error.causes:
        causes = [_named_cause(c, base, edits, previous) for c in error.causes]
        error = ExpandError("conflict", ", ".join(c.message for c in causes), causes)
    return Checked(verdict, checked.flat, error)


def _with_warnings(verdict: Verdict, original: Verdict) -> Verdict:
    verdict.warnings = list(original.warnings)
    return verdict


def _kept_warnings(edits: list[Edit], checked: Checked) -> list[str]:
    """Hand-edited values the resize kept as the owner's (none when the resize is refused)."""
    if checked.flat is None or not checked.verdict.allowed:
        return []
    return [f"kept hand-edited {short_field(e.field)} {show(e.current)} "
            f"(flattening had set {show(e.recorded)})"[:MAX_WARNING]
            for e in edits if value_at(checked.flat, e.key) == e.current]
