"""The KubeVirt releases this project answers as: plain data, no I/O.

Each behaviour change that alters an answer is named once (`CHANGES`), with the first release that has the
new behaviour, like upstream's feature gate registry; the rest of the code asks `profile.has(NAME)` and never
compares versions itself. Feature gate states per release (`GATES`), the fields a release's schema lacks
(`SCHEMA_ADDED`, what its API server prunes from a foreign input) and release constants live here too.

Release lines: v1.7, v1.8, v1.9 and main (KubeVirt main at d923fdb815, what the project followed before
releases existed; the default, so today's answers are unchanged).

`resolve(text)` parses a version string as clusters report it:

    v1.8.4, 1.8.4                 the v1.8 line, exact
    v1.8, 1.8, v1.8.x             the v1.8 line at its newest known patch (assumed)
    v1.8.4-hco.1, v1.8.4+b        the suffix is ignored (assumed)
    v1.9.0-12-gabc1234            a build after v1.9.0: v1.9's rules (assumed); main's commit prefix: main
    main                          main, exact
    latest, sha256:..., x@sha256: names no release: main's rules (assumed)
    newer than main (v1.10, v2)   main's rules (assumed: the newest profile; say so on every answer)
    older than v1.7               refused (ValueError naming the supported releases)
    anything else                 refused (ValueError)

A profile whose `assumed` is set answers, but every place that reports the release (the CLI, /readyz, the
startup log) says what was assumed.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

__all__ = [
    "CHANGES", "DEFAULT_RELEASE", "GATES", "LINES", "MAIN_COMMIT", "MAIN_PROFILE", "PROFILES", "SCHEMA_ADDED",
    "Change", "Release", "ReleaseProfile", "SchemaKind", "defaulted", "from_kubevirt", "line_profile",
    "parse_release", "resolve",
]

GateState = Literal["Alpha", "Beta", "GA", "Deprecated"]
SchemaKind = Literal["instancetype", "preference", "vm"]
MAIN_COMMIT = "d923fdb815"
DEFAULT_RELEASE = "main"


@dataclass(frozen=True, order=True)
class Release:
    """A KubeVirt version; main is `Release(1, 10, 0, final=False)`: after every v1.9.x, before v1.10.0."""
    major: int
    minor: int
    patch: int
    final: bool = True

    def __str__(self) -> str:
        return "main" if self == MAIN else f"v{self.major}.{self.minor}.{self.patch}"

    @property
    def line(self) -> str:
        return "main" if self >= MAIN else f"v{self.major}.{self.minor}"


MAIN = Release(1, 10, 0, final=False)


def _v(major: int, minor: int, patch: int = 0) -> Release:
    return Release(major, minor, patch)


class Change(NamedTuple):
    name: str
    since: Release  # the first release with the new behaviour
    description: str
    spec_id: str = ""  # the id in shared/spec/kubevirt-releases-spec.md (or where it was found)


# Names of the changes the code consults (constants, so a typo is a NameError, not a silent False).
NUMA_DISTANCES = "numa-distances"
EDK2_OVMF_LAYOUT = "edk2-ovmf-layout"
CREATION_TIMESTAMP_OMITTED = "creation-timestamp-omitted"
BETA_GATES_ON = "beta-gates-default-on"
DISABLED_FEATURE_GATES = "disabled-feature-gates-field"
PANIC_DEVICE_CREATION = "panic-device-creation"
INFER_FROM_SNAPSHOTS = "infer-from-snapshots"
LAUNCH_SECURITY_DEPRECATION_WARNING = "instancetype-launch-security-deprecated"
POD_NETWORK_ADD_RESTART = "pod-network-add-requires-restart"
MULTI_ARCHITECTURE_CHECK_REMOVED = "multi-architecture-check-removed"
ARM64_EFI_SECURE_BOOT_DEFAULT_FALSE = "arm64-efi-secure-boot-default-false"
NAD_SWAP_ALWAYS_LIVE = "nad-swap-always-live"
NAD_SWAP_MIGRATABLE_ONLY = "nad-swap-migratable-only"
TDX_QGS_SOCKET_ANNOTATION = "tdx-qgs-socket-annotation"

CHANGES: tuple[Change, ...] = (
    Change(DISABLED_FEATURE_GATES, _v(1, 8), "developerConfiguration.disabledFeatureGates exists", "-"),
    Change(CREATION_TIMESTAMP_OMITTED, _v(1, 8),
           "expand-vm-spec prints no `creationTimestamp: null` (apimachinery v0.34)", "§1"),
    Change(POD_NETWORK_ADD_RESTART, _v(1, 8), "adding a pod network needs a restart", "1027ea3fd2"),
    Change(MULTI_ARCHITECTURE_CHECK_REMOVED, _v(1, 8), "no MultiArchitecture gate check on architecture", "B5"),
    Change(ARM64_EFI_SECURE_BOOT_DEFAULT_FALSE, _v(1, 8, 3), "arm64 `efi: {}` defaults secureBoot false", "C6"),
    Change(PANIC_DEVICE_CREATION, _v(1, 9), "preferredPanicDeviceModel creates a panic device", "C3"),
    Change(INFER_FROM_SNAPSHOTS, _v(1, 9), "inferFromVolume follows VolumeSnapshot sources", "C4"),
    Change(BETA_GATES_ON, _v(1, 9), "a Beta feature gate is on unless disabled", "C5"),
    Change(LAUNCH_SECURITY_DEPRECATION_WARNING, _v(1, 9), "warning on an instance type's launchSecurity", "C2"),
    Change(TDX_QGS_SOCKET_ANNOTATION, _v(1, 9),
           "virt-api annotates a TDX VMI with kubevirt.io/qgs-socket-path", "vmi-mutator.go"),
    Change(EDK2_OVMF_LAYOUT, _v(1, 9), "amd64 firmware in /usr/share/edk2/ovmf (was /usr/share/OVMF)", "C8"),
    Change(NAD_SWAP_ALWAYS_LIVE, _v(1, 9), "a NAD name change is live without a gate", "B4"),
    Change(NAD_SWAP_MIGRATABLE_ONLY, MAIN, "a NAD name change is live only on a migratable VMI", "8737323d0e"),
    Change(NUMA_DISTANCES, MAIN, "guest NUMA cells carry <distances>", "D3"),
)
_CHANGE_NAMES = frozenset(change.name for change in CHANGES)

# gate -> ((since, state), ...) in release order: upstream's featuregate active.go/inactive.go at each tag.
GATES: Mapping[str, tuple[tuple[Release, GateState], ...]] = {
    "VideoConfig": ((_v(1, 7), "Beta"), (_v(1, 9), "GA")),
    "PanicDevices": ((_v(1, 7), "Beta"), (_v(1, 9), "GA")),
    "SecureExecution": ((_v(1, 7), "Beta"), (_v(1, 9), "GA")),
    "WorkloadEncryptionSEV": ((_v(1, 7), "Alpha"), (_v(1, 9), "Beta")),
    "LiveUpdateNADRef": ((_v(1, 8), "Beta"), (_v(1, 9), "GA")),
    "MultiArchitecture": ((_v(1, 7), "Alpha"), (_v(1, 8), "Deprecated")),
    "DeclarativeHotplugVolumes": ((_v(1, 7), "Alpha"), (_v(1, 9), "Beta")),
    "HotplugVolumes": ((_v(1, 7), "Alpha"), (_v(1, 9), "Deprecated")),
}

_TLBFLUSH = ("spec.template.spec.domain.features.hyperv.tlbflush.direct",
             "spec.template.spec.domain.features.hyperv.tlbflush.extended")
# kind -> ((since, path), ...): fields added in `since`; a release before it prunes them. `[]` walks a list.
SCHEMA_ADDED: Mapping[SchemaKind, tuple[tuple[Release, str], ...]] = {
    "instancetype": (),
    "preference": (
        (_v(1, 8), "spec.features.preferredHyperv.tlbflush.direct"),
        (_v(1, 8), "spec.features.preferredHyperv.tlbflush.extended"),
        (_v(1, 9), "spec.devices.preferredVideoType"),
        (_v(1, 9), "spec.preferredLaunchSecurity"),
    ),
    "vm": (
        *((_v(1, 8), path) for path in _TLBFLUSH),
        (_v(1, 8), "spec.template.spec.domain.devices.interfaces[].passtBinding"),
        (_v(1, 8), "spec.template.spec.domain.memory.reservedOverhead"),
        (_v(1, 8), "spec.template.spec.domain.rebootPolicy"),
        (_v(1, 8), "spec.template.spec.utilityVolumes"),
        (_v(1, 8), "spec.template.spec.volumes[].containerPath"),
        (_v(1, 8), "spec.dataVolumeTemplates[].spec.source.imageio.insecureSkipVerify"),
        (_v(1, 9), "spec.template.spec.domain.devices.interfaces[].portRanges"),
        (_v(1, 9), "spec.template.spec.networks[].resourceClaim"),
        (_v(1, 9), "spec.template.spec.serviceAccountName"),
    ),
}

# The line of client-go's scheme/register.go that names the scheme in a decode error.
_SCHEME_REGISTER_LINE = ((_v(1, 7), 42), (_v(1, 8), 43), (_v(1, 9), 44))
_AMD64_OVMF = {False: "/usr/share/OVMF", True: "/usr/share/edk2/ovmf"}

# The release lines and the newest patch of each that the project knows (the conformance answers' release).
LINES: Mapping[str, Release] = {"v1.7": _v(1, 7, 4), "v1.8": _v(1, 8, 4), "v1.9": _v(1, 9, 0), "main": MAIN}
OLDEST = _v(1, 7)


@dataclass(frozen=True)
class ReleaseProfile:
    """How one KubeVirt release answers. `reported` is the text given; `assumed` says what was guessed
    (None when the text named a known release exactly)."""
    release: Release
    reported: str = ""
    # What was assumed, and where the release came from ("--kubevirt-version", "KubeVirt NS/NAME
    # status.observedKubeVirtVersion", "default": no release known; "" for a profile from a version string):
    # what is said about the answer, not part of it, so two profiles of one release compare equal.
    assumed: str | None = field(default=None, compare=False)
    source: str = field(default="", compare=False)

    @property
    def line(self) -> str:
        return self.release.line

    @property
    def name(self) -> str:
        """`v1.8.4` or `main`: the release answered as."""
        return str(self.release)

    def has(self, change: str) -> bool:
        """Whether this release has the behaviour `change` (one of `CHANGES`; anything else is a KeyError)."""
        if change not in _CHANGE_NAMES:
            raise KeyError(f"unknown release change {change!r}")
        return next(c for c in CHANGES if c.name == change).since <= self.release

    def gate_state(self, gate: str) -> GateState | None:
        """The gate's state in this release; None when the release does not register it."""
        state: GateState | None = None
        for since, value in GATES.get(gate, ()):
            if since <= self.release:
                state = value
        return state

    def gate_enabled(self, gate: str, configuration: Mapping[str, Any]) -> bool:
        """Upstream's feature gate evaluation for this release under a merged KubeVirtConfiguration."""
        developer = configuration.get("developerConfiguration")
        developer = developer if isinstance(developer, Mapping) else {}
        state = self.gate_state(gate)
        if state == "GA" or gate in (developer.get("featureGates") or ()):
            return True
        if self.has(DISABLED_FEATURE_GATES) and gate in (developer.get("disabledFeatureGates") or ()):
            return False
        return state == "Beta" and self.has(BETA_GATES_ON)

    def pruned_paths(self, kind: SchemaKind) -> tuple[str, ...]:
        """The paths of `kind` objects this release's schema lacks."""
        return tuple(path for since, path in SCHEMA_ADDED[kind] if self.release < since)

    @property
    def scheme_register_line(self) -> int:
        return max(line for since, line in _SCHEME_REGISTER_LINE if since <= self.release)

    @property
    def amd64_ovmf_path(self) -> str:
        return _AMD64_OVMF[self.has(EDK2_OVMF_LAYOUT)]

    def describe(self) -> str:
        """`KubeVirt v1.8.4 (profile v1.8)`, plus what was assumed."""
        text = f"KubeVirt {self.name} (profile {self.line})"
        return f"{text}; {self.assumed}" if self.assumed else text


def line_profile(line: str) -> ReleaseProfile:
    return ReleaseProfile(LINES[line], reported=str(LINES[line]))


PROFILES: Mapping[str, ReleaseProfile] = {line: line_profile(line) for line in LINES}
MAIN_PROFILE = PROFILES["main"]

_SEMVER = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+|x))?(?P<rest>[-+].*)?$")
_DESCRIBE = re.compile(r"-(\d+)-g([0-9a-f]{4,40})$")
_DIGEST = re.compile(r"^(?:[^@\s]+@)?sha256:[0-9a-f]{12,64}$")
_SUPPORTED = "supported: v1.7.x, v1.8.x, v1.9.x, main"


def parse_release(text: str) -> tuple[Release, str | None]:
    """(the release `text` names, what was assumed or None); ValueError with the reason when it names none."""
    clean = text.strip()
    lowered = clean.lower()
    if lowered == "main":
        return MAIN, None
    if lowered == "latest" or _DIGEST.match(lowered):
        return MAIN, f"{clean!r} names no release: answered as main"
    match = _SEMVER.match(clean)
    if match is None:
        raise ValueError(f"cannot parse KubeVirt version {clean!r}: expected e.g. v1.8.4, 1.8, main or latest "
                         f"({_SUPPORTED})")
    major, minor = int(match[1]), int(match[2])
    rest = match["rest"] or ""
    if match[3] in (None, "x"):
        known = LINES.get(f"v{major}.{minor}")
        patch = known.patch if known is not None else 0
        return Release(major, minor, patch), f"patch not given: v{major}.{minor}.{patch} assumed"
    release = Release(major, minor, int(match[3]))
    described = _DESCRIBE.search(rest)
    if described is not None:
        if MAIN_COMMIT.startswith(described[2][:10]) or described[2].startswith(MAIN_COMMIT):
            return MAIN, None
        return release, f"a build {described[1]} commits after {release}: its rules assumed"
    return release, (f"suffix {rest!r} ignored" if rest else None)


def resolve(text: str | None, default: str = DEFAULT_RELEASE) -> ReleaseProfile:
    """The profile to answer with for a version string (None or empty: `default`). ValueError for text
    that names no release and for releases older than the oldest profile (v1.7)."""
    if text is None or not text.strip():
        return resolve(default) if default else MAIN_PROFILE
    release, assumed = parse_release(text)
    if release < OLDEST:
        raise ValueError(f"KubeVirt {release} is older than the oldest release this project answers as "
                         f"({OLDEST.line}; {_SUPPORTED})")
    if release > MAIN:
        release, assumed = MAIN, f"{text.strip()} is newer than every known release: answered as main"
    return ReleaseProfile(release, reported=text.strip(), assumed=assumed)


def _where(kubevirt: Mapping[str, Any]) -> str:
    meta = found if isinstance(found := kubevirt.get("metadata"), Mapping) else {}
    return f"KubeVirt {meta.get('namespace') or ''}/{meta.get('name') or ''}"


def defaulted(why: str) -> ReleaseProfile:
    """main's profile because no release is known, saying why (never a silent default)."""
    return ReleaseProfile(MAIN, reported="main", assumed=f"{why}: answered as main", source="default")


def from_kubevirt(kubevirt: Mapping[str, Any] | None) -> ReleaseProfile:
    """The release a KubeVirt CR reports: `status.observedKubeVirtVersion` (the release deployed). While
    `status.targetKubeVirtVersion` differs an upgrade is under way: the observed (older) release answers, and
    `assumed` says so. No CR, no observed version or one that names no supported release: main, saying why."""
    if not isinstance(kubevirt, Mapping):
        return defaulted("no KubeVirt CR")
    where = _where(kubevirt)
    status = found if isinstance(found := kubevirt.get("status"), Mapping) else {}
    observed = str(status.get("observedKubeVirtVersion") or "").strip()
    if not observed:
        return defaulted(f"{where} reports no status.observedKubeVirtVersion")
    try:
        profile = resolve(observed)
    except ValueError as exc:
        return defaulted(f"{where} status.observedKubeVirtVersion: {exc}")
    target = str(status.get("targetKubeVirtVersion") or "").strip()
    notes = [profile.assumed] if profile.assumed else []
    if target and target != observed:
        notes.insert(0, f"upgrade under way from {observed} to {target}: answering as {observed}, the release "
                        "deployed, until virt-operator reports the upgrade done")
    return ReleaseProfile(profile.release, reported=observed, assumed="; ".join(notes) or None,
                          source=f"{where} status.observedKubeVirtVersion")
