"""`--strict` and the unknown-field check of every command that reads objects, as kubectl's strict field validation.

The fields the release's schema does not have (`sources.crds`: the CRDs shipped with the package) are checked
on the documents as given, before the release's pruning (`Inputs.given`). By default each is a warning on
stderr, one line per field, as kubectl prints the API server's warnings
(`Warning: unknown field "spec.template.spec.domain.cpu.guest"`); the command goes on as before (the field is
kept). With `--strict` the first object holding one is refused as `kubectl apply --validate=strict` refuses
it: an InputError (exit 2) naming the file and every unknown field of the object.
"""
from __future__ import annotations

from typing import Any, TextIO

from instancetype_webhook.cli.inputs import InputError, Inputs
from instancetype_webhook.kubevirt.unknown_fields import unknown_field_message
from instancetype_webhook.sources.crds import unknown_fields_of

__all__ = ["add_strict_argument", "check_fields", "strict_error", "unknown_field_warnings"]


def add_strict_argument(parser: Any) -> None:
    parser.add_argument("--strict", action="store_true",
                        help="refuse (exit 2) an object with a field the release's schema does not have, as "
                             "kubectl's strict field validation does (default: a warning on stderr)")


def _unknown(inputs: Inputs) -> list[tuple[str, dict[str, Any], list[str]]]:
    """(file, object, its unknown field paths) for every given object that has some."""
    found = []
    for origin, docs in inputs.given if inputs.given is not None else inputs.files:
        for doc in docs:
            paths = unknown_fields_of(doc, inputs.release)
            if paths:
                found.append((origin, doc, paths))
    return found


def unknown_field_warnings(inputs: Inputs) -> list[str]:
    """The warning lines kubectl would print for the given objects, one per unknown field."""
    return [f"Warning: {unknown_field_message(path)}" for _, _, paths in _unknown(inputs) for path in paths]


def strict_error(origin: str, obj: dict[str, Any], paths: list[str]) -> str:
    """The API server's strict decoding refusal of `obj`, as kubectl reports it for the file `origin`."""
    kind = str(obj.get("kind") or "")
    version = str(obj.get("apiVersion") or "").rpartition("/")[2]
    fields = ", ".join(unknown_field_message(path) for path in paths)
    return (f"{origin}: {kind} in version \"{version}\" cannot be handled as a {kind}: "
            f"strict decoding error: {fields}")


def check_fields(inputs: Inputs, strict: bool, err: TextIO) -> None:
    """Warn on `err` about every unknown field; with `strict`, InputError for the first object holding one."""
    if strict and (found := _unknown(inputs)):
        raise InputError(strict_error(*found[0]))
    for line in unknown_field_warnings(inputs):
        err.write(f"{line}\n")
