"""The release profiles: version parsing, the change registry, feature gates, pruned fields."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from instancetype_webhook.kubevirt import releases
from instancetype_webhook.kubevirt.releases import MAIN_PROFILE, PROFILES, Release, resolve


@pytest.mark.parametrize(("text", "name", "line", "assumed"), [
    ("v1.8.4", "v1.8.4", "v1.8", None),
    ("1.8.4", "v1.8.4", "v1.8", None),
    ("v1.7.2", "v1.7.2", "v1.7", None),
    ("main", "main", "main", None),
    ("v1.9.0-beta.0-1264-gd923fdb815", "main", "main", None),
])
def test_exact_versions(text, name, line, assumed):
    profile = resolve(text)
    assert (profile.name, profile.line, profile.assumed) == (name, line, assumed)
    assert profile.reported == text


@pytest.mark.parametrize(("text", "name", "says"), [
    ("v1.8.4-hco.1", "v1.8.4", "suffix '-hco.1' ignored"),
    ("v1.8.4+build.7", "v1.8.4", "suffix '+build.7' ignored"),
    ("v1.8", "v1.8.4", "patch not given"),
    ("1.7.x", "v1.7.4", "patch not given"),
    ("v1.9.0-12-gabc1234", "v1.9.0", "12 commits after v1.9.0"),
    ("latest", "main", "names no release"),
    ("sha256:" + "a" * 64, "main", "names no release"),
    ("quay.io/kubevirt/virt-api@sha256:" + "b" * 64, "main", "names no release"),
    ("v1.10.0", "main", "newer than every known release"),
    ("v2.0.1", "main", "newer than every known release"),
])
def test_assumed_versions_say_what_was_assumed(text, name, says):
    profile = resolve(text)
    assert profile.name == name
    assert profile.assumed is not None and says in profile.assumed
    assert says in profile.describe()


@pytest.mark.parametrize("text", ["foo", "v1.x.y", "1", "v1.8.4.5", "sha256:zz"])
def test_garbage_is_a_clear_value_error(text):
    with pytest.raises(ValueError, match="cannot parse KubeVirt version .*supported: v1.7.x, v1.8.x, v1.9.x, main"):
        resolve(text)


@pytest.mark.parametrize("text", ["v1.6.3", "v0.59.0"])
def test_older_than_the_oldest_profile_is_refused(text):
    with pytest.raises(ValueError, match="older than the oldest release .*v1.7.*supported"):
        resolve(text)


def test_empty_is_the_default_and_the_default_is_main():
    assert resolve(None) == MAIN_PROFILE.__class__(MAIN_PROFILE.release, reported="main")
    assert resolve("  ").name == "main"
    assert resolve(None, default="v1.8.4").name == "v1.8.4"


def test_version_order_places_main_after_every_v1_9_and_before_v1_10():
    assert Release(1, 9, 99) < releases.MAIN < Release(1, 10, 0)
    assert str(releases.MAIN) == "main" and str(Release(1, 8, 4)) == "v1.8.4"


@pytest.mark.parametrize(("line", "distances", "edk2", "timestamps_omitted", "beta_on"), [
    ("v1.7", False, False, False, False),
    ("v1.8", False, False, True, False),
    ("v1.9", False, True, True, True),
    ("main", True, True, True, True),
])
def test_changes_per_line(line, distances, edk2, timestamps_omitted, beta_on):
    profile = PROFILES[line]
    assert profile.has(releases.NUMA_DISTANCES) is distances
    assert profile.has(releases.EDK2_OVMF_LAYOUT) is edk2
    assert profile.has(releases.CREATION_TIMESTAMP_OMITTED) is timestamps_omitted
    assert profile.has(releases.BETA_GATES_ON) is beta_on


def test_patch_level_changes_follow_the_patch():
    assert not resolve("v1.8.2").has("arm64-efi-secure-boot-default-false")
    assert resolve("v1.8.3").has("arm64-efi-secure-boot-default-false")


def test_every_change_is_named_once_and_unknown_names_fail_loudly():
    names = [change.name for change in releases.CHANGES]
    assert len(names) == len(set(names))
    with pytest.raises(KeyError, match="unknown release change"):
        MAIN_PROFILE.has("numa-distance")


def test_release_constants():
    assert [PROFILES[line].scheme_register_line for line in ("v1.7", "v1.8", "v1.9", "main")] == [42, 43, 44, 44]
    assert PROFILES["v1.8"].amd64_ovmf_path == "/usr/share/OVMF"
    assert PROFILES["v1.9"].amd64_ovmf_path == "/usr/share/edk2/ovmf"


def _config(enabled=(), disabled=()):
    return {"developerConfiguration": {"featureGates": list(enabled), "disabledFeatureGates": list(disabled)}}


def test_beta_gates_are_on_by_default_only_from_v1_9():
    assert not PROFILES["v1.8"].gate_enabled("LiveUpdateNADRef", _config())
    assert PROFILES["v1.8"].gate_enabled("LiveUpdateNADRef", _config(enabled=["LiveUpdateNADRef"]))
    assert PROFILES["v1.9"].gate_enabled("WorkloadEncryptionSEV", _config())
    assert not PROFILES["v1.9"].gate_enabled("WorkloadEncryptionSEV", _config(disabled=["WorkloadEncryptionSEV"]))
    assert not PROFILES["v1.8"].gate_enabled("WorkloadEncryptionSEV", _config())


def test_ga_gates_are_on_and_v1_7_has_no_disabled_list():
    assert PROFILES["main"].gate_enabled("VideoConfig", _config(disabled=["VideoConfig"]))
    assert not PROFILES["v1.7"].gate_enabled("VideoConfig", _config())
    # v1.7 has no disabledFeatureGates: listing a gate there changes nothing, enabling it still wins
    assert PROFILES["v1.7"].gate_enabled("PanicDevices", _config(enabled=["PanicDevices"], disabled=["PanicDevices"]))
    assert PROFILES["v1.7"].gate_state("LiveUpdateNADRef") is None


def test_pruned_paths_per_line():
    assert "spec.devices.preferredVideoType" in PROFILES["v1.8"].pruned_paths("preference")
    assert "spec.features.preferredHyperv.tlbflush.direct" not in PROFILES["v1.8"].pruned_paths("preference")
    assert "spec.features.preferredHyperv.tlbflush.direct" in PROFILES["v1.7"].pruned_paths("preference")
    assert PROFILES["v1.9"].pruned_paths("preference") == () == MAIN_PROFILE.pruned_paths("vm")


def test_prune_to_release_drops_what_the_schema_lacks_and_keeps_the_input():
    from instancetype_webhook.kubevirt.prune import prune_to_release
    preference = {"kind": "VirtualMachineClusterPreference",
                  "spec": {"devices": {"preferredVideoType": "virtio", "preferredDiskBus": "virtio"},
                           "preferredLaunchSecurity": {}}}
    pruned = prune_to_release(preference, "preference", PROFILES["v1.8"])
    assert pruned["spec"] == {"devices": {"preferredDiskBus": "virtio"}}
    assert "preferredVideoType" in preference["spec"]["devices"]  # the input is not changed
    assert prune_to_release(preference, "preference", PROFILES["v1.9"]) is preference
    vm = {"spec": {"template": {"spec": {"domain": {"devices": {"interfaces": [{"name": "a", "passtBinding": {}},
                                                                               {"name": "b"}]}}}}}}
    interfaces = prune_to_release(vm, "vm", PROFILES["v1.7"])["spec"]["template"]["spec"]["domain"]["devices"]
    assert interfaces == {"interfaces": [{"name": "a"}, {"name": "b"}]}


# -- every change is read by the code whose answer it changes ------------------------------------------------

PACKAGE = Path(releases.__file__).resolve().parent.parent  # instancetype_webhook/
RELEASES_PY = PACKAGE / "kubevirt" / "releases.py"  # the source (in the compiled build __file__ is the extension)
# Read by a file another change owns, not yet in this tree: may be consulted or not, nothing else may.
PENDING: dict[str, str] = {}  # a change named before the code that reads it lands (none today)


def _referenced(tree: ast.AST) -> set[str]:
    """The names a piece of code reads: plain names and attribute names (`releases.NAME`, `x.method`)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
    return found


def _releases_names_read(tree: ast.Module) -> set[str]:
    """The names of releases.py a module reads: imported from it (`from ...releases import NAME`, under any
    alias) and used, or read as `releases.NAME`; plus every attribute name (the profile's methods)."""
    imported = {alias.asname or alias.name: alias.name for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("kubevirt.releases")
                for alias in node.names}
    loads = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    attributes = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    return {imported[name] for name in loads & set(imported)} | attributes


def _constants(tree: ast.Module) -> dict[str, str]:
    """change name -> the module constant holding it, in releases.py."""
    out = {}
    for node in tree.body:  # NAME = "..." or NAME: Final = "..."
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else \
            node.target if isinstance(node, ast.AnnAssign) else None
        value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
        if isinstance(target, ast.Name) and isinstance(value, ast.Constant) and isinstance(value.value, str):
            out[value.value] = target.id
    return out


def unconsulted(names: list[str]) -> list[str]:
    """The change names no code reads: a change is read when its constant is used outside releases.py, or
    inside a ReleaseProfile method (gate_enabled, amd64_ovmf_path) that code outside releases.py uses."""
    own = ast.parse(RELEASES_PY.read_text())
    constants = _constants(own)
    outside: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        if path.resolve() != RELEASES_PY:
            outside |= _releases_names_read(ast.parse(path.read_text()))
    profile = next(n for n in own.body if isinstance(n, ast.ClassDef) and n.name == "ReleaseProfile")
    through_methods: set[str] = set()
    for method in profile.body:
        if isinstance(method, ast.FunctionDef) and method.name in outside and method.name != "has":
            through_methods |= _referenced(method)
    return [name for name in names
            if name not in constants or not ({constants[name]} & (outside | through_methods))]


def test_every_change_is_consulted_by_the_code_it_changes():
    names = [change.name for change in releases.CHANGES]
    assert [name for name in unconsulted(names) if name not in PENDING] == []
    assert set(PENDING) <= set(names)


def test_the_scan_finds_a_change_nobody_reads():
    assert unconsulted(["no-such-change", releases.NUMA_DISTANCES, releases.BETA_GATES_ON]) == ["no-such-change"]
