"""Input handling shared by the offline commands (`expand`, `validate`, `domxml`): one reader for all three.

`-f PATH` (repeatable; `-` is stdin) names YAML or JSON files, each possibly holding several documents or
a `List`. VirtualMachines are the subjects; instance types, preferences, ControllerRevisions and what
`inferFromVolume` reads (PVCs, DataVolumes, DataSources, VolumeSnapshots) found in any file join the
reference source, on top of the catalogue (the bundled common-instancetypes unless `--catalog DIR` names
another directory; `build_source` builds that source). A `kubevirt.io/v1` KubeVirt object is the cluster
configuration (`Inputs.cluster_settings`); a VirtualMachineInstance is a running VM's VMI (`Inputs.vmis`,
read by `plan`). `--old FILE` is the stored VM of an UPDATE.

`--kubevirt-version R` (`add_release_argument`; default main) answers as KubeVirt release R: the documents
and the catalogue are pruned as R's API server would store them (`kubevirt.prune`), and the settings carry
R's profile. `auto` takes the release a KubeVirt object among the documents reports in its status.

`read_request` reads all of that into a `Request`; `Request.mutate` runs the VM mutating webhook's
instancetype stage (`instancetype_webhook.kubevirt.mutator.mutate_vm`, with the old VM on an UPDATE) as the API server
would before anything else sees the VM, and raises `MutationDenied` when it denies. Anything unreadable
raises InputError with one clear line.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from instancetype_webhook.kubevirt.causes import Verdict
from instancetype_webhook.kubevirt.configuration import (
    DEFAULT_SETTINGS,
    ClusterSettings,
    kubevirt_problem,
    settings_from_kubevirt,
    with_release,
)
from instancetype_webhook.kubevirt.mutator import Mutation, mutate_vm
from instancetype_webhook.kubevirt.prune import prune_object
from instancetype_webhook.kubevirt.releases import MAIN_PROFILE, ReleaseProfile, from_kubevirt, resolve
from instancetype_webhook.kubevirt.source import InMemorySource
from instancetype_webhook.sources.catalog import CatalogError, is_reference_object, iter_documents, load_catalog

VIRTUAL_MACHINE = "VirtualMachine"
VIRTUAL_MACHINE_INSTANCE = "VirtualMachineInstance"
KUBEVIRT = "KubeVirt"


class InputError(ValueError):
    """Input that cannot be read or understood; the message is one line for the user."""


class MutationDenied(Exception):
    """The VM mutating webhook's instancetype stage denied the VM (matcher checks, inferFromVolume)."""

    def __init__(self, verdict: Verdict):
        super().__init__(verdict.message)
        self.verdict = verdict


@dataclass
class Inputs:
    """What the files held: the documents of each file, in order, and every reference object."""

    files: list[tuple[str, list[dict[str, Any]]]] = field(default_factory=list)
    release: ReleaseProfile = MAIN_PROFILE

    @property
    def documents(self) -> list[dict[str, Any]]:
        return [doc for _, docs in self.files for doc in docs]

    @property
    def vms(self) -> list[dict[str, Any]]:
        return [doc for doc in self.documents if doc.get("kind") == VIRTUAL_MACHINE]

    @property
    def vmis(self) -> list[dict[str, Any]]:
        """The running VirtualMachineInstances among the documents (what `plan` reads beside the VM)."""
        return [doc for doc in self.documents if doc.get("kind") == VIRTUAL_MACHINE_INSTANCE]

    @property
    def reference_objects(self) -> list[dict[str, Any]]:
        return [doc for doc in self.documents if is_reference_object(doc)]

    def cluster_settings(self) -> ClusterSettings:
        """The cluster configuration: a KubeVirt object among the documents (its spec.configuration merged
        over KubeVirt's defaults, status.defaultArchitecture), else KubeVirt's defaults. InputError for more
        than one, or for a configuration virt-api would refuse."""
        kubevirts = [doc for doc in self.documents if doc.get("kind") == KUBEVIRT]
        if not kubevirts:
            return with_release(DEFAULT_SETTINGS, self.release)
        if len(kubevirts) > 1:
            raise InputError(f"{len(kubevirts)} KubeVirt objects; give at most one")
        kubevirt = kubevirts[0]
        if not isinstance(kubevirt.get("spec", {}), dict):
            raise InputError("the KubeVirt object's spec is not an object")
        problem = kubevirt_problem(kubevirt)
        if problem is not None:
            raise InputError(f"the KubeVirt object's configuration is invalid: {problem}")
        return settings_from_kubevirt(kubevirt, release=self.release)

    def kubevirt(self) -> dict[str, Any] | None:
        """The first KubeVirt object among the documents (what `--kubevirt-version auto` reads), or None."""
        return next((doc for doc in self.documents if doc.get("kind") == KUBEVIRT), None)

    def as_release(self, version: str | None) -> Inputs:
        """The documents as release `version`'s API server stores them (`auto`: the KubeVirt object's)."""
        release = release_option(version)
        if release is None:
            release = from_kubevirt(self.kubevirt())
        files = [(origin, [prune_object(doc, release) for doc in docs]) for origin, docs in self.files]
        return Inputs(files, release)


def add_release_argument(parser: Any, default: str | None = "main", where: str = "", shown: str | None = None) -> None:
    """`--kubevirt-version R`: the KubeVirt release the command answers as (one helper for every command)."""
    parser.add_argument("--kubevirt-version", metavar="R", default=default,
                        help="answer as KubeVirt release R (v1.7.x, v1.8.x, v1.9.x, main; e.g. v1.8.4): inputs "
                             "given as files are pruned as R's API server stores them; `auto` reads the release "
                             f"the KubeVirt CR reports{where} (default {shown or default})")


def release_option(version: str | None) -> ReleaseProfile | None:
    """The profile `--kubevirt-version` names (None for `auto`); InputError with one line when it names none."""
    if version is not None and version.strip().lower() == "auto":
        return None
    try:
        profile = resolve(version)
    except ValueError as exc:
        raise InputError(f"--kubevirt-version: {exc}") from exc
    return ReleaseProfile(profile.release, profile.reported, profile.assumed, source="--kubevirt-version")


def release_note(release: ReleaseProfile) -> str | None:
    """A line for stderr when the release answered as was assumed (an upgrade, a suffix, no release known)."""
    return f"answering as {release.describe()}" if release.assumed else None


def announce(release: ReleaseProfile, err: TextIO) -> None:
    note = release_note(release)
    if note is not None:
        err.write(f"note: {note}\n")


def read_text(path: str, stdin: TextIO | None = None) -> str:
    if path == "-":
        stream = stdin or sys.stdin
        try:
            data = stream.buffer.read() if hasattr(stream, "buffer") else stream.read()
            return data.decode("utf-8") if isinstance(data, bytes) else data
        except (OSError, UnicodeError) as exc:
            raise InputError(f"<stdin>: cannot read: {exc}") from exc
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise InputError(f"{path}: cannot read: {reason}") from exc


def read_inputs(paths: list[str], stdin: TextIO | None = None) -> Inputs:
    """Every document of every file; raises InputError for unreadable files or non-object documents."""
    inputs = Inputs()
    for path in paths:
        origin = "<stdin>" if path == "-" else path
        try:
            docs = list(iter_documents(read_text(path, stdin), origin))
        except CatalogError as exc:
            raise InputError(str(exc)) from exc
        except UnicodeError as exc:
            raise InputError(f"{origin}: not valid UTF-8 text: {exc}") from exc
        if not docs:
            raise InputError(f"{origin}: no Kubernetes object found")
        for doc in docs:
            unserved(doc, origin)
            meta = doc.get("metadata")
            if is_reference_object(doc) and not (isinstance(meta, dict) and isinstance(meta.get("name"), str)):
                raise InputError(f"{origin}: a {doc['kind']} without metadata.name")
        inputs.files.append((origin, docs))
    return inputs


# The versions KubeVirt's API server serves for its core kinds: another version of kubevirt.io is a typo or a
# manifest for something else, never a VM to answer for as if it were v1.
SERVED = {"kubevirt.io": ("v1", "v1alpha3")}
CORE_KINDS = (VIRTUAL_MACHINE, VIRTUAL_MACHINE_INSTANCE, KUBEVIRT)


def unserved(doc: dict[str, Any], origin: str) -> None:
    """InputError when a VirtualMachine, VMI or KubeVirt object names a version of kubevirt.io that is not served."""
    api_version = doc.get("apiVersion")
    if doc.get("kind") not in CORE_KINDS or not isinstance(api_version, str) or "/" not in api_version:
        return
    group, _, version = api_version.partition("/")
    if group in SERVED and version not in SERVED[group]:
        raise InputError(f"{origin}: {doc['kind']} {api_version}: KubeVirt serves {group}/"
                         f"{' and '.join(SERVED[group])} (use apiVersion: {group}/{SERVED[group][0]})")


def read_subject(paths: list[str], stdin: TextIO | None, kinds: tuple[str, ...]) -> tuple[dict[str, Any], Inputs]:
    """The one document whose kind is in `kinds`, and everything read from `paths`."""
    inputs = read_inputs(paths, stdin)
    subjects = [doc for doc in inputs.documents if doc.get("kind") in kinds]
    wanted = " or ".join(kinds)
    if not subjects:
        raise InputError(f"no document of kind {wanted} in {', '.join(paths)}")
    if len(subjects) > 1:
        raise InputError(f"{len(subjects)} documents of kind {wanted}; give exactly one")
    return subjects[0], inputs


def build_source(objects: list[dict[str, Any]], catalog: str | None, vm: dict[str, Any],
                 release: ReleaseProfile = MAIN_PROFILE) -> InMemorySource:
    """The catalogue's objects (as `release` stores them), then the given ones on top (they win on the same
    kind/namespace/name)."""
    namespace = (vm.get("metadata") or {}).get("namespace") or "default"
    source = load_catalog(catalog, default_namespace=namespace, release=release)
    for obj in objects:
        source.add(obj)
    return source


def vm_identity(vm: dict[str, Any]) -> tuple[str, str]:
    meta = found if isinstance(found := vm.get("metadata"), dict) else {}
    return str(meta.get("namespace") or "default"), str(meta.get("name") or "")


def read_old_vm(path: str, stdin: TextIO | None = None) -> dict[str, Any]:
    """The one VirtualMachine of `--old FILE`: the VM as stored before the UPDATE."""
    vms = read_inputs([path], stdin).vms
    origin = "<stdin>" if path == "-" else path
    if len(vms) != 1:
        raise InputError(f"--old {origin}: {len(vms) or 'no'} VirtualMachine(s); give exactly one (the stored VM)")
    return vms[0]


@dataclass
class Request:
    """What an offline command was given: the documents, the stored VM of an UPDATE, the source, the cluster."""

    inputs: Inputs
    old_vm: dict[str, Any] | None
    source: InMemorySource
    settings: ClusterSettings

    def subject(self, kinds: tuple[str, ...]) -> dict[str, Any]:
        """The one document whose kind is in `kinds`."""
        subjects = [doc for doc in self.inputs.documents if doc.get("kind") in kinds]
        if len(subjects) != 1:
            found = "no document" if not subjects else f"{len(subjects)} documents"
            origins = ", ".join(origin for origin, _ in self.inputs.files)
            raise InputError(f"{found} of kind {' or '.join(kinds)} in {origins}; give exactly one")
        return subjects[0]

    def old_for(self, vm: dict[str, Any]) -> dict[str, Any] | None:
        """The stored VM when `vm` is its UPDATE (same namespace and name), else None (a CREATE)."""
        if self.old_vm is not None and vm_identity(self.old_vm) == vm_identity(vm):
            return self.old_vm
        return None

    def check_old(self, vms: list[dict[str, Any]]) -> None:
        """InputError when --old names none of `vms` (an UPDATE keeps the name and namespace)."""
        if self.old_vm is not None and not any(self.old_for(vm) for vm in vms):
            given = ", ".join("{}/{}".format(*vm_identity(vm)) for vm in vms) or "none"
            raise InputError("--old is VirtualMachine {}/{}, but the VM is {}: an UPDATE keeps the name and "
                             "namespace".format(*vm_identity(self.old_vm), given))

    def mutation(self, vm: dict[str, Any]) -> Mutation:
        """The mutating webhook's instancetype stage on `vm` (an UPDATE when --old is its stored version)."""
        return mutate_vm(vm, self.old_for(vm), self.source, self.settings)

    def mutate(self, vm: dict[str, Any], err: TextIO | None = None) -> dict[str, Any]:
        """The VM as the mutating webhook's instancetype stage leaves it (its warnings, e.g. an inference that
        `Ignore` swallowed, go to `err`); MutationDenied when it denies."""
        self.check_old([vm])
        mutation = self.mutation(vm)
        if mutation.vm is None:
            raise MutationDenied(mutation.verdict)
        for warning in mutation.verdict.warnings:
            if err is not None:
                err.write(f"warning: {warning}\n")
        return mutation.vm


def read_request(paths: list[str], stdin: TextIO | None, catalog: str | None, old: str | None = None,
                 version: str | None = "main") -> Request:
    """Everything the -f files, --catalog and --old give, as release `version` stores it; InputError (or
    CatalogError) when unreadable."""
    inputs = read_inputs(paths, stdin).as_release(version)
    old_vm = prune_object(read_old_vm(old, stdin), inputs.release) if old else None
    first_vm = inputs.vms[0] if inputs.vms else (old_vm or {})
    source = build_source(inputs.reference_objects, catalog, first_vm, inputs.release)
    return Request(inputs, old_vm, source, inputs.cluster_settings())


def add_input_arguments(parser: Any, what: str, old: bool = True, dest: str = "filename") -> None:
    """The input flags every offline command shares: -f FILE (repeatable; `what` says what the files hold),
    --catalog DIR, --old FILE (`old`) and --kubevirt-version R."""
    parser.add_argument("-f", "--filename", dest=dest, action="append", required=True, metavar="FILE",
                        help=f"{what} (YAML or JSON, multi-document); '-' reads stdin")
    parser.add_argument("--catalog", metavar="DIR", help="use the manifests under DIR instead of the bundled catalogue")
    if old:
        add_old_argument(parser)
    add_release_argument(parser)


def add_old_argument(parser: Any) -> None:
    parser.add_argument("--old", metavar="FILE",
                        help="the VM as stored before this change: checks it as an UPDATE (the mutating webhook's "
                             "UPDATE-only matcher checks)")


def print_denial(verdict: Verdict, err: TextIO) -> None:
    """A denial by the mutating webhook, as the API server reports it to the user."""
    err.write(f"rejected by the mutating webhook ({verdict.code}): {verdict.message}\n")
    for cause in verdict.causes:
        err.write(f"  - {cause.field or '<no field>'}: {cause.message} [{cause.reason}]\n")
