"""Input handling shared by the offline commands (`expand`, `validate`, `domxml`): one reader for all three.

`-f PATH` (repeatable; `-` is stdin) names YAML or JSON files, each possibly holding several documents or a
`List`, or a directory of them (`-R`: its subdirectories too), or an AdmissionReview (its `request.object`; on
an UPDATE its `request.oldObject` is the stored VM): `cli.documents` reads them. VirtualMachines are the
subjects; instance types, preferences, ControllerRevisions and what `inferFromVolume` reads (PVCs,
DataVolumes, DataSources, VolumeSnapshots) found in any file join the reference source, on top of the
catalogue (the bundled common-instancetypes unless `--catalog DIR` names another directory; `build_source`
builds that source). A `kubevirt.io/v1` KubeVirt object is the cluster configuration
(`Inputs.cluster_settings`); a VirtualMachineInstance is a running VM's VMI (`Inputs.vmis`, read by `plan`).
`--old FILE` is the stored VM of an UPDATE.

`--kubevirt-version R` (`add_release_argument`; default main) answers as KubeVirt release R: the documents
and the catalogue are pruned as R's API server would store them (`kubevirt.prune`), and the settings carry
R's profile. `auto` takes the release a KubeVirt object among the documents reports in its status.

`read_request` reads all of that into a `Request`; `Request.mutate` runs the VM mutating webhook's
instancetype stage (`instancetype_webhook.kubevirt.mutator.mutate_vm`, with the old VM on an UPDATE) as the API server
would before anything else sees the VM, and raises `MutationDenied` when it denies. Anything unreadable
raises InputError with one clear line.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from instancetype_webhook.cli.documents import DocumentError, Review, read_argument
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
from instancetype_webhook.settings import ENV_PREFIX
from instancetype_webhook.sources.catalog import is_reference_object, load_catalog

VIRTUAL_MACHINE = "VirtualMachine"
VIRTUAL_MACHINE_INSTANCE = "VirtualMachineInstance"
KUBEVIRT = "KubeVirt"
RELEASE_ENV = f"{ENV_PREFIX}KUBEVIRT_VERSION"  # the variable every command reads when --kubevirt-version is not given


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
    given: list[tuple[str, list[dict[str, Any]]]] | None = None  # the files before pruning (cli.strict checks them)
    reviews: list[Review] = field(default_factory=list)

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
        return Inputs(files, release, self.files if self.given is None else self.given, self.reviews)

    def holds(self) -> str:
        """What the files hold, for a message that says why there is nothing to work on: "a ConfigMap",
        "an AdmissionReview of a CREATE of a ConfigMap by alice", "3 objects (2 ConfigMap, 1 Secret)"."""
        if len(self.reviews) == 1 and len(self.documents) <= 1:
            return self.reviews[0].describe()
        kinds = [str(doc.get("kind") or "object without a kind") for doc in self.documents]
        if len(kinds) <= 1:
            return f"a {kinds[0]}" if kinds else "no object"
        counts = {kind: kinds.count(kind) for kind in kinds}
        return f"{len(kinds)} objects ({', '.join(f'{n} {kind}' for kind, n in counts.items())})"


def add_release_argument(parser: Any, default: str | None = "main", where: str = "", shown: str | None = None) -> None:
    """`--kubevirt-version R`: the KubeVirt release the command answers as (one helper for every command).

    The flag is left None when not given (argparse.SUPPRESS stays SUPPRESS): `release_option(None, default)`
    then reads INSTANCETYPE_WEBHOOK_KUBEVIRT_VERSION, else `default`, so the flag and the variable name the
    release the same way for every command."""
    import argparse

    parser.add_argument("--kubevirt-version", metavar="R", default=default if default is argparse.SUPPRESS else None,
                        help="answer as KubeVirt release R (v1.7.x, v1.8.x, v1.9.x, main; e.g. v1.8.4): inputs "
                             "given as files are pruned as R's API server stores them; `auto` reads the release "
                             f"the KubeVirt CR reports{where}; unset: ${RELEASE_ENV}, else "
                             f"{shown or default or 'main'}")


def release_option(version: str | None, default: str = "main",
                   flag: str = "--kubevirt-version") -> ReleaseProfile | None:
    """The profile `flag` names (None for `auto`). `version` None (the flag not given): the variable
    INSTANCETYPE_WEBHOOK_KUBEVIRT_VERSION, else `default`. InputError with one line, naming the flag or the
    variable, when the value is empty or names no supported release."""
    origin = flag
    if version is None:
        version, origin = os.environ.get(RELEASE_ENV), RELEASE_ENV
        if version is None:
            version, origin = default, flag
    if not version.strip():
        raise InputError(f"{origin}: empty; name a release (e.g. v1.8.4, v1.9, main) or auto")
    if version.strip().lower() == "auto":
        return None
    try:
        profile = resolve(version)
    except ValueError as exc:
        raise InputError(f"{origin}: {exc}") from exc
    return ReleaseProfile(profile.release, profile.reported, profile.assumed, source=origin)


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


def read_inputs(paths: list[str], stdin: TextIO | None = None, recursive: bool = False) -> Inputs:
    """Every document of every file (a directory: of its files; `recursive`: of its subdirectories' too);
    raises InputError for unreadable files or non-object documents."""
    inputs = Inputs()
    for path in paths:
        try:
            documents = read_argument(path, lambda name: read_text(name, stdin), recursive)
        except DocumentError as exc:
            raise InputError(str(exc)) from exc
        for origin, docs in documents.files:
            for doc in docs:
                unserved(doc, origin)
                meta = doc.get("metadata")
                if is_reference_object(doc) and not (isinstance(meta, dict) and isinstance(meta.get("name"), str)):
                    raise InputError(f"{origin}: a {doc['kind']} without metadata.name")
            inputs.files.append((origin, docs))
        inputs.reviews.extend(documents.reviews)
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


def read_subject(paths: list[str], stdin: TextIO | None, kinds: tuple[str, ...],
                 recursive: bool = False) -> tuple[dict[str, Any], Inputs]:
    """The one document whose kind is in `kinds`, and everything read from `paths`."""
    inputs = read_inputs(paths, stdin, recursive)
    return the_subject(inputs, kinds), inputs


def the_subject(inputs: Inputs, kinds: tuple[str, ...]) -> dict[str, Any]:
    """The one document whose kind is in `kinds`; InputError saying what the files hold instead."""
    subjects = [doc for doc in inputs.documents if doc.get("kind") in kinds]
    wanted = " or ".join(kinds)
    origins = ", ".join(dict.fromkeys(origin for origin, _ in inputs.files)) or "the input"
    if not subjects:
        raise InputError(f"no {wanted} in {origins}: it holds {inputs.holds()}")
    if len(subjects) > 1:
        raise InputError(f"{len(subjects)} documents of kind {wanted} in {origins}; give exactly one")
    return subjects[0]


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
        return the_subject(self.inputs, kinds)

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
                 version: str | None = "main", recursive: bool = False) -> Request:
    """Everything the -f files, --catalog and --old give, as release `version` stores it; InputError (or
    CatalogError) when unreadable. The stored VM of an UPDATE is --old's, or an UPDATE AdmissionReview's
    `request.oldObject`."""
    inputs = read_inputs(paths, stdin, recursive).as_release(version)
    stored = old_from_reviews(inputs.reviews)
    if old and stored is not None:
        raise InputError(f"--old and {stored[0]}'s request.oldObject both give the stored VM; give one")
    old_vm = read_old_vm(old, stdin) if old else stored[1] if stored else None
    old_vm = prune_object(old_vm, inputs.release) if old_vm is not None else None
    first_vm = inputs.vms[0] if inputs.vms else (old_vm or {})
    source = build_source(inputs.reference_objects, catalog, first_vm, inputs.release)
    return Request(inputs, old_vm, source, inputs.cluster_settings())


def old_from_reviews(reviews: list[Review]) -> tuple[str, dict[str, Any]] | None:
    """(origin, request.oldObject) of the UPDATE AdmissionReview among the inputs that has a VM there."""
    updates = [(review.origin, review.old_object) for review in reviews
               if review.operation == "UPDATE" and review.old_object is not None
               and review.old_object.get("kind") == VIRTUAL_MACHINE]
    if len(updates) > 1:
        raise InputError(f"{len(updates)} UPDATE AdmissionReviews of a VirtualMachine; give one at a time")
    return updates[0] if updates else None


def add_input_arguments(parser: Any, what: str, old: bool = True, dest: str = "filename") -> None:
    """The input flags every offline command shares: -f FILE (repeatable; `what` says what the files hold),
    -R, --catalog DIR, --old FILE (`old`) and --kubevirt-version R."""
    parser.add_argument("-f", "--filename", dest=dest, action="append", required=True, metavar="FILE",
                        help=f"{what}: a file (YAML or JSON, multi-document, a List, an AdmissionReview), a "
                             "directory of them, or '-' for stdin")
    add_recursive_argument(parser)
    parser.add_argument("--catalog", metavar="DIR", help="use the manifests under DIR instead of the bundled catalogue")
    if old:
        add_old_argument(parser)
    add_release_argument(parser)


def add_recursive_argument(parser: Any) -> None:
    parser.add_argument("-R", "--recursive", action="store_true",
                        help="read the directories given with -f and their subdirectories, as kubectl does")


def add_old_argument(parser: Any) -> None:
    parser.add_argument("--old", metavar="FILE",
                        help="the VM as stored before this change: checks it as an UPDATE (the mutating webhook's "
                             "UPDATE-only matcher checks)")


def print_denial(verdict: Verdict, err: TextIO) -> None:
    """A denial by the mutating webhook, as the API server reports it to the user."""
    err.write(f"rejected by the mutating webhook ({verdict.code}): {verdict.message}\n")
    for cause in verdict.causes:
        err.write(f"  - {cause.field or '<no field>'}: {cause.message} [{cause.reason}]\n")
