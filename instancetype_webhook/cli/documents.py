"""The objects a `-f` argument names, in every form users have them (what `cli.inputs.read_inputs` reads).

- a file, or `-` for stdin; YAML or JSON; several YAML documents in one file;
- a `List` or any `...List` (`kind: List`, `VirtualMachineList`: what `kubectl get -o yaml` prints): its items;
- a directory: its `.yaml`, `.yml` and `.json` files in name order (with `recursive`, its subdirectories too,
  as `kubectl apply -f DIR -R` reads them);
- an AdmissionReview (what the API server, or `curl --data @review.json`, sends the webhook): its
  `request.object`, with the request's namespace when the object names none (as the API server fills it in).
  The request itself is kept as a `Review` (operation, namespace, user, the stored object of an UPDATE).

Anything unreadable raises `DocumentError` with one line naming the file.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from instancetype_webhook.admission.envelope import ReviewError, parse_review
from instancetype_webhook.cli.syntax import syntax_message
from instancetype_webhook.sources.catalog import MANIFEST_SUFFIXES, CatalogError, iter_documents

ADMISSION_REVIEW = "AdmissionReview"
STDIN = "<stdin>"


class DocumentError(ValueError):
    """A `-f` argument that cannot be read or understood; the message is one line naming it."""


@dataclass(frozen=True)
class Review:
    """An AdmissionReview's request, without its object: what the API server said about the call."""

    origin: str
    operation: str
    kind: str
    namespace: str
    user: str
    old_object: dict[str, Any] | None

    def describe(self) -> str:
        by = f" by {self.user}" if self.user else ""
        empty = ", which carries no object to check" if self.operation in ("DELETE", "CONNECT") else ""
        return f"an AdmissionReview of a {self.operation} of a {self.kind or 'kind not given'}{by}{empty}"


@dataclass
class Documents:
    """The objects of one `-f` argument's file(s), in order, and the AdmissionReviews they came in."""

    files: list[tuple[str, list[dict[str, Any]]]]
    reviews: list[Review]


def manifest_paths(directory: Path, recursive: bool) -> list[Path]:
    """The manifests of `directory` (kubectl's extensions), in name order; subdirectories only when `recursive`."""
    found = directory.rglob("*") if recursive else directory.iterdir()
    return sorted(p for p in found if p.is_file() and p.suffix in MANIFEST_SUFFIXES)


def read_argument(path: str, text_of: Any, recursive: bool = False) -> Documents:
    """Every object `-f path` names (`text_of(path)` reads one file or `-`): DocumentError when unreadable."""
    if path != "-" and Path(path).is_dir():
        files = manifest_paths(Path(path), recursive)
        if not files:
            deep = "" if recursive else " (-R reads its subdirectories too)"
            raise DocumentError(f"{path}: a directory without .yaml, .yml or .json files{deep}")
        # a file in a directory without any object (an empty file, a comment) is skipped, as kubectl does
        parts = [read_text_documents(text_of(str(file)), str(file), empty_ok=True) for file in files]
        documents = Documents([f for part in parts for f in part.files], [r for part in parts for r in part.reviews])
        if not any(docs for _, docs in documents.files):
            raise DocumentError(f"{path}: no Kubernetes object found in its files")
        return documents
    return read_text_documents(text_of(path), STDIN if path == "-" else path)


def read_text_documents(text: str, origin: str, empty_ok: bool = False) -> Documents:
    """The objects of one text (YAML or JSON), Lists flattened and AdmissionReviews unwrapped."""
    objects: list[dict[str, Any]] = []
    reviews: list[Review] = []
    for doc in parse(text, origin):
        for obj in list_items(doc):
            if obj.get("kind") == ADMISSION_REVIEW and "request" in obj:
                review, subject = unwrap(obj, origin)
                reviews.append(review)
                if subject is not None:
                    objects.append(subject)
            else:
                objects.append(obj)
    if not objects and not reviews and not empty_ok:
        raise DocumentError(f"{origin}: no Kubernetes object found")
    return Documents([(origin, objects)], reviews)


def parse(text: str, origin: str) -> list[dict[str, Any]]:
    """The documents of a YAML or JSON text (JSON first when it looks like JSON: YAML refuses JSON's tabs)."""
    if text.lstrip().startswith(("{", "[")):
        try:
            doc = orjson.loads(text)
        except orjson.JSONDecodeError:
            pass  # YAML flow style, or JSON with an error: the YAML reader says where
        else:
            if not isinstance(doc, dict):
                raise DocumentError(f"{origin}: expected a Kubernetes object, got {type(doc).__name__}")
            return [doc]
    try:
        return list(iter_documents(text, origin))
    except CatalogError as exc:
        raise DocumentError(syntax_message(exc, origin) or str(exc)) from exc


def list_items(doc: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """A List's (any `...List`'s) items, nested Lists too; any other object as it is."""
    kind = doc.get("kind")
    if isinstance(kind, str) and kind.endswith("List") and isinstance(doc.get("items"), list):
        for item in doc["items"]:
            if isinstance(item, dict):
                yield from list_items(item)
        return
    yield doc


def unwrap(doc: dict[str, Any], origin: str) -> tuple[Review, dict[str, Any] | None]:
    """The request of an AdmissionReview (checked as the webhook checks it) and its object (None for a DELETE
    or CONNECT), the object's namespace filled from the request's."""
    try:
        request = parse_review(orjson.dumps(doc))["request"]
    except (ReviewError, TypeError) as exc:
        raise DocumentError(f"{origin}: not an AdmissionReview the webhook can answer: {exc}") from exc
    namespace = request.get("namespace") or ""
    user_info = request.get("userInfo")  # optional, and no answer depends on it
    user = user_info.get("username", "") if isinstance(user_info, dict) else ""
    old = request.get("oldObject") if request["operation"] == "UPDATE" else None
    review = Review(origin, request["operation"], request["kind"].get("kind", ""), namespace, str(user),
                    in_namespace(old, namespace))
    return review, in_namespace(request.get("object"), namespace)


def in_namespace(obj: dict[str, Any] | None, namespace: str) -> dict[str, Any] | None:
    """`obj` with metadata.namespace set to `namespace` when it names none (what the API server stores)."""
    if obj is None or not namespace:
        return obj
    meta = obj.get("metadata")
    if meta is None:
        return {**obj, "metadata": {"namespace": namespace}}
    if isinstance(meta, dict) and not meta.get("namespace"):
        return {**obj, "metadata": {**meta, "namespace": namespace}}
    return obj
