"""The forms a `-f` argument takes (cli/documents.py): files and stdin, YAML and JSON, Lists, directories with
and without -R, and AdmissionReviews (request.object, the request's namespace, an UPDATE's oldObject)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from instancetype_webhook.cli.documents import DocumentError, read_argument, read_text_documents

VM = {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "metadata": {"name": "web"},
      "spec": {"instancetype": {"name": "u1.small"}, "template": {"spec": {}}}}
CM = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}


def review(operation: str = "CREATE", obj: dict | None = VM, old: dict | None = None, namespace: str = "apps") -> dict:
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {"uid": "1", "kind": {"group": "kubevirt.io", "version": "v1", "kind": "VirtualMachine"},
                        "operation": operation, "namespace": namespace, "userInfo": {"username": "alice"},
                        "object": obj, "oldObject": old}}


def read_file(path: Path, recursive: bool = False):
    return read_argument(str(path), lambda name: Path(name).read_text(), recursive)


def kinds(documents) -> list[str]:
    return [doc["kind"] for _, docs in documents.files for doc in docs]


def test_several_yaml_documents_and_lists_of_any_kind_are_their_objects():
    text = yaml.safe_dump_all([CM, {"apiVersion": "v1", "kind": "List", "items": [
        VM, {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineList", "items": [VM, VM]}]}])
    assert kinds(read_text_documents(text, "x.yaml")) == ["ConfigMap"] + ["VirtualMachine"] * 3


def test_json_indented_with_tabs_is_read():
    text = json.dumps(VM, indent="\t")
    with pytest.raises(yaml.YAMLError):
        list(yaml.safe_load_all(text))  # what a YAML reader alone makes of it
    assert read_text_documents(text, "vm.json").files == [("vm.json", [VM])]


@pytest.mark.parametrize("text, message", [
    ("", "x: no Kubernetes object found"),
    ("[1, 2]", "x: expected a Kubernetes object, got list"),
    ("a: [b\n", "x:2:1: not valid YAML or JSON"),  # the position of the syntax error
])
def test_what_is_no_object_is_one_line(text, message):
    with pytest.raises(DocumentError) as error:
        read_text_documents(text, "x")
    assert str(error.value).startswith(message) and "\n" not in str(error.value)


def test_a_review_is_its_object_in_the_request_namespace():
    documents = read_text_documents(json.dumps(review()), "r.json")
    [(origin, [vm])] = documents.files
    assert origin == "r.json" and vm["metadata"] == {"name": "web", "namespace": "apps"}
    [request] = documents.reviews
    assert (request.operation, request.kind, request.namespace, request.user) == ("CREATE", "VirtualMachine",
                                                                                   "apps", "alice")
    assert request.old_object is None
    assert request.describe() == "an AdmissionReview of a CREATE of a VirtualMachine by alice"


def test_an_object_with_its_own_namespace_keeps_it():
    obj = {**VM, "metadata": {"name": "web", "namespace": "mine"}}
    [(_, [vm])] = read_text_documents(json.dumps(review(obj=obj)), "r.json").files
    assert vm["metadata"]["namespace"] == "mine"


def test_an_update_keeps_the_stored_object():
    old = {**VM, "spec": {**VM["spec"], "instancetype": {"name": "u1.large"}}}
    [request] = read_text_documents(json.dumps(review("UPDATE", old=old)), "r.json").reviews
    assert request.old_object is not None
    assert request.old_object["spec"]["instancetype"] == {"name": "u1.large"}
    assert request.old_object["metadata"]["namespace"] == "apps"


def test_a_delete_has_no_object_and_says_so():
    documents = read_text_documents(json.dumps(review("DELETE", obj=None, old=VM)), "r.json")
    assert documents.files == [("r.json", [])]
    assert documents.reviews[0].old_object is None  # only an UPDATE's stored object is the old VM
    assert documents.reviews[0].describe().endswith("DELETE of a VirtualMachine by alice, which carries no "
                                                    "object to check")


def test_a_broken_review_names_the_field_as_the_webhook_does():
    broken = review()
    del broken["request"]["uid"]
    with pytest.raises(DocumentError, match=r"^r.json: not an AdmissionReview the webhook can answer: "
                                            r"request.uid: required$"):
        read_text_documents(json.dumps(broken), "r.json")


def test_a_directory_is_its_manifests_in_name_order_and_r_goes_down(tmp_path):
    (tmp_path / "b.yaml").write_text(yaml.safe_dump(VM))
    (tmp_path / "a.json").write_text(json.dumps(CM))
    (tmp_path / "notes.txt").write_text("not a manifest")
    (tmp_path / "empty.yml").write_text("# nothing here\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "c.yaml").write_text(json.dumps(review()))
    flat = read_file(tmp_path)
    assert [origin for origin, _ in flat.files] == [str(tmp_path / n) for n in ("a.json", "b.yaml", "empty.yml")]
    assert kinds(flat) == ["ConfigMap", "VirtualMachine"] and flat.reviews == []
    deep = read_file(tmp_path, recursive=True)
    assert kinds(deep) == ["ConfigMap", "VirtualMachine", "VirtualMachine"] and len(deep.reviews) == 1


def test_a_directory_without_manifests_says_so(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "vm.yaml").write_text(yaml.safe_dump(VM))
    with pytest.raises(DocumentError, match=r"a directory without \.yaml, \.yml or \.json files \(-R reads"):
        read_file(tmp_path)
    (tmp_path / "sub" / "vm.yaml").write_text("")
    with pytest.raises(DocumentError, match="no Kubernetes object found in its files"):
        read_file(tmp_path, recursive=True)
