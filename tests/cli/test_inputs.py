"""The one reader of `expand`, `validate` and `domxml` (cli/inputs.py): every input a conformance case
has (reference objects, volume objects, ControllerRevisions, a KubeVirt object, --old for an UPDATE) and the
mutating webhook's stage before expansion and validation.

Corpus-wide, the commands given a case's inputs as files answer what the library answers for that case
(conformance, which feeds the same inputs to the same functions): one code path, whatever the answers.
"""
from __future__ import annotations

import json

import pytest
import yaml

from instancetype_webhook.cli.inputs import InputError, MutationDenied, read_request
from instancetype_webhook.conformance import cases as inputs
from instancetype_webhook.conformance import compare, engine
from tests.kit.cli import run_main
from tests.kit.shared_data import CONFORMANCE, conformance_cases

CASES = conformance_cases()
DENIED = "update.preference.name-changed-revision-kept"  # an UPDATE the mutator denies (renamed, revision kept)
UPDATE_CASES = [c for c in CASES if c["input"].get("operation") == "UPDATE"]


def case(name: str) -> dict:
    return json.loads((CONFORMANCE / f"{name}.json").read_text())


def kubevirt(configuration: dict) -> dict:
    return {"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
            "metadata": {"name": "kubevirt", "namespace": "kubevirt"},
            "spec": {"configuration": configuration}, "status": {"phase": "Deployed"}}


def write_case(tmp_path, c: dict) -> list[str]:
    """The case's inputs as files: the VM and every listed object (and the KubeVirt CR), --old, no catalogue."""
    docs = [c["input"]["vm"]]
    for key, kind in inputs.INPUT_KINDS.items():
        docs += [{**obj, "kind": obj.get("kind") or kind} for obj in c["input"].get(key) or []]
    if "kubevirtConfiguration" in c["input"]:
        docs.append(kubevirt(c["input"]["kubevirtConfiguration"]))
    (tmp_path / "in.yaml").write_text(yaml.safe_dump_all(docs))
    (tmp_path / "empty").mkdir(exist_ok=True)
    argv = ["-f", str(tmp_path / "in.yaml"), "--catalog", str(tmp_path / "empty")]
    if inputs.case_old_vm(c) is not None:
        (tmp_path / "old.yaml").write_text(yaml.safe_dump(c["input"]["oldVm"]))
        argv += ["--old", str(tmp_path / "old.yaml")]
    return argv



def with_mutator(c: dict) -> dict:
    """The case as the CLI treats every VM: through the mutating webhook's stage first."""
    return {**c, "expectedMutate": c.get("expectedMutate", {})}


@pytest.mark.parametrize("c", CASES, ids=[c["name"] for c in CASES])
def test_expand_and_validate_answer_what_the_library_answers(tmp_path, c):
    files = write_case(tmp_path, c)
    answer = engine.expand_answer(with_mutator(c))
    code, out, err = run_main("expand", "-o", "json", *files)
    if "vm" in answer:
        assert code == 0, err
        assert compare.first_difference(json.loads(out), answer["vm"]) is None
    else:
        assert code == 1 and out == ""
        assert answer["error"] in err

    answer = engine.validate_answer(with_mutator(c))
    code, out, _ = run_main("validate", "-o", "json", *files)
    ours = json.loads(out)
    assert code == (0 if answer["allowed"] else 1)
    assert ours["allowed"] == answer["allowed"]
    if not answer["allowed"]:
        assert ours["status"]["code"] == answer["code"] and ours["status"]["message"] == answer["message"]


def test_the_corpus_has_update_cases_with_old_vms():
    assert len(UPDATE_CASES) >= 5 and all("oldVm" in c["input"] for c in UPDATE_CASES)


def test_old_makes_it_an_update_for_all_three_commands(tmp_path):
    c = case(DENIED)
    argv = write_case(tmp_path, c)
    message = "the Matcher Name has been updated without updating the RevisionName"
    for command in ("expand", "validate", "domxml"):
        code, out, err = run_main(command, *argv)
        assert code == 1, (command, out, err)
        text = err if command != "validate" else out
        assert message in text and "spec.preference.revisionName" in text, (command, text)
    as_create = argv[:argv.index("--old")]
    assert run_main("expand", *as_create)[0] == 0  # the same VM as a CREATE: no UPDATE check, it expands
    assert run_main("validate", *as_create)[0] == 0


def test_a_denial_is_one_clear_message(tmp_path):
    code, _, err = run_main("expand", *write_case(tmp_path, case(DENIED)))
    assert err.splitlines() == [
        "rejected by the mutating webhook (422): the Matcher Name has been updated without updating the RevisionName",
        "  - spec.preference.revisionName: the Matcher Name has been updated without updating the RevisionName "
        "[FieldValueInvalid]",
    ]


def test_matcher_check_denial_on_create(tmp_path):
    c = case("infer.matcher.name-and-inferFromVolume")
    code, _, err = run_main("expand", *write_case(tmp_path, c))
    assert code == 1 and err.startswith("rejected by the mutating webhook (422): " + c["expectedInfer"]["message"])


def test_old_must_be_the_same_vm(tmp_path):
    c = case(DENIED)
    argv = write_case(tmp_path, c)
    old = {**c["input"]["oldVm"], "metadata": {"name": "other", "namespace": "ns-oracle"}}
    (tmp_path / "old.yaml").write_text(yaml.safe_dump(old))
    for command in ("expand", "validate", "domxml"):
        code, _, err = run_main(command, *argv)
        assert code == 2 and "--old is VirtualMachine ns-oracle/other, but the VM is ns-oracle/upd" in err, command


@pytest.mark.parametrize("content, message", [
    ("", "no Kubernetes object found"),
    ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", "no VirtualMachine(s); give exactly one"),
])
def test_old_file_without_one_vm_exits_2(tmp_path, content, message):
    argv = write_case(tmp_path, case(DENIED))
    (tmp_path / "old.yaml").write_text(content)
    code, _, err = run_main("expand", *argv)
    assert code == 2 and message in err


def test_reader_collects_every_input_kind(tmp_path):
    c = case("infer.datavolumetemplate.wins-over-live-datavolume")
    argv = write_case(tmp_path, c)
    request = read_request([argv[1]], None, argv[3])
    kinds = [doc["kind"] for doc in request.inputs.documents]
    assert kinds.count("VirtualMachine") == 1 and "DataVolume" in kinds and "DataSource" in kinds
    assert request.subject(("VirtualMachine",)) == c["input"]["vm"]
    assert request.old_vm is None and request.old_for(c["input"]["vm"]) is None
    instancetype = c["input"]["clusterInstancetypes"][0]
    assert request.source.get("VirtualMachineClusterInstancetype", instancetype["metadata"]["name"]) is not None
    assert request.source.get("VirtualMachineClusterInstancetype", "u1.medium") is None  # --catalog replaced it


def test_kubevirt_object_is_the_cluster_configuration(tmp_path):
    c = case("cluster-config.arch.default-arm64.common-fedora")
    argv = write_case(tmp_path, c)
    request = read_request([argv[1]], None, argv[3])
    library = inputs.case_settings(c["input"])
    assert ((request.settings.configuration, request.settings.machine_type)
            == (library.configuration, library.machine_type))
    assert request.settings.architecture == "arm64" and inputs.case_settings({}).architecture == "amd64"


def test_mutate_raises_denied_and_input_errors(tmp_path):
    c = case(DENIED)
    argv = write_case(tmp_path, c)
    request = read_request([argv[1]], None, argv[3], argv[5])
    with pytest.raises(MutationDenied) as denied:
        request.mutate(c["input"]["vm"])
    assert denied.value.verdict.code == 422
    with pytest.raises(InputError, match="an UPDATE keeps the name and namespace"):
        request.mutate({**c["input"]["vm"], "metadata": {"name": "x", "namespace": "ns-oracle"}})
