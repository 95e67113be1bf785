"""The one reader of `expand`, `validate` and `domxml` (cli/inputs.py): every input a conformance case
has (reference objects, volume objects, ControllerRevisions, a KubeVirt object, --old for an UPDATE) and the
mutating webhook's stage before expansion and validation.

Corpus-wide, the commands given a case's inputs as files answer what the library answers for that case
(conformance, which feeds the same inputs to the same functions): one code path, whatever the answers.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from instancetype_webhook.cli.inputs import InputError, MutationDenied, read_request, release_option
from instancetype_webhook.conformance import cases as inputs
from instancetype_webhook.conformance import compare, engine
from tests.kit.cli import run_main
from tests.kit.shared_data import CONFORMANCE, ROOT, conformance_cases

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


# -- --kubevirt-version R (add_release_argument, release_option, Inputs.as_release) on the commands that answer:
# files and the bundled catalogue are pruned as R's API server stores them, the answer follows R's profile, and a
# bad value is one clear line with exit status 2 (was tests/cli/test_kubevirt_version.py)

def write(tmp_path: Path, name: str, *docs: dict) -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


@pytest.fixture
def numa_vm(tmp_path: Path) -> str:
    """A VM of the dedicated-CPU, NUMA-passthrough instance type cx1.large1gi (from the bundled catalogue)."""
    case = json.loads((CONFORMANCE / "common-instancetype.cx1.large1gi.typical.json").read_text())
    return write(tmp_path, "numa.yaml", case["input"]["vm"])


VM = {
    "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "metadata": {"name": "win", "namespace": "ns"},
    "spec": {"runStrategy": "Always", "instancetype": {"name": "u1.large"},
             "preference": {"name": "windows.10.virtio"},
             "template": {"spec": {"domain": {"devices": {}}, "volumes": [
                 {"name": "containerdisk", "containerDisk": {"image": "quay.io/containerdisks/fedora:latest"}}]}}},
}


def test_domxml_numa_distances_follow_the_release(numa_vm: str) -> None:
    code, main_xml, _ = run_main("domxml", "-f", numa_vm, "--kubevirt-version", "main")
    assert code == 0 and "<distances>" in main_xml
    code, release_xml, _ = run_main("domxml", "-f", numa_vm, "--kubevirt-version", "v1.9.0")
    assert code == 0 and "<numa>" in release_xml and "<distances>" not in release_xml


def test_domxml_default_is_main(numa_vm: str) -> None:
    assert run_main("domxml", "-f", numa_vm)[1] == run_main("domxml", "-f", numa_vm, "--kubevirt-version", "main")[1]


def test_expand_prints_creation_timestamp_null_on_v1_7(tmp_path: Path) -> None:
    vm = write(tmp_path, "vm.yaml", VM)
    code, old, _ = run_main("expand", "-f", vm, "--kubevirt-version", "v1.7.4")
    assert code == 0 and "creationTimestamp: null" in old
    code, new, _ = run_main("expand", "-f", vm)
    assert code == 0 and "creationTimestamp" not in new


def test_bundled_catalogue_is_pruned_to_the_release(tmp_path: Path) -> None:
    """windows.10.virtio has preferredVideoType, a field v1.9 added: v1.8.4's API server pruned it."""
    vm = write(tmp_path, "vm.yaml", VM)
    flat_main = json.loads(run_main("expand", "-f", vm, "-o", "json")[1])
    flat_v18 = json.loads(run_main("expand", "-f", vm, "-o", "json", "--kubevirt-version", "v1.8.4")[1])
    assert flat_main["spec"]["template"]["spec"]["domain"]["devices"]["video"] == {"type": "virtio"}
    assert "video" not in flat_v18["spec"]["template"]["spec"]["domain"]["devices"]


def test_a_preference_given_as_a_file_is_pruned_too(tmp_path: Path) -> None:
    preference = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachinePreference",
                  "metadata": {"name": "mine", "namespace": "ns"},
                  "spec": {"devices": {"preferredVideoType": "vga", "preferredDiskBus": "sata"}}}
    vm = {**VM, "spec": {**VM["spec"], "preference": {"kind": "VirtualMachinePreference", "name": "mine"}}}
    files = ["-f", write(tmp_path, "vm.yaml", vm, preference), "-o", "json"]
    devices_main = json.loads(run_main("expand", *files)[1])["spec"]["template"]["spec"]["domain"]["devices"]
    devices_v18 = json.loads(run_main("expand", *files, "--kubevirt-version", "v1.8")[1])[
        "spec"]["template"]["spec"]["domain"]["devices"]
    assert devices_main["video"] == {"type": "vga"}
    assert "video" not in devices_v18
    assert devices_v18["disks"][0]["disk"]["bus"] == "sata"  # what v1.8 keeps is still applied


def test_auto_reads_the_kubevirt_object_among_the_files(tmp_path: Path) -> None:
    kubevirt = {"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt", "metadata": {"name": "kubevirt",
                                                                                   "namespace": "kubevirt"},
                "spec": {}, "status": {"phase": "Deployed", "observedKubeVirtVersion": "v1.7.4",
                                       "targetKubeVirtVersion": "v1.7.4"}}
    files = ["-f", write(tmp_path, "vm.yaml", VM, kubevirt)]
    code, out, err = run_main("expand", *files, "--kubevirt-version", "auto")
    assert code == 0 and "creationTimestamp: null" in out and err == ""
    assert "creationTimestamp" not in run_main("expand", *files)[1]  # offline default: main, not the object's


def test_an_assumed_release_is_said(tmp_path: Path) -> None:
    code, _, err = run_main("expand", "-f", write(tmp_path, "vm.yaml", VM), "--kubevirt-version", "v1.8.4-hco.1")
    assert code == 0
    assert err == "note: answering as KubeVirt v1.8.4 (profile v1.8); suffix '-hco.1' ignored\n"


@pytest.mark.parametrize("command", ["expand", "validate", "domxml", "resize", "plan"])
def test_a_release_too_old_is_one_line_and_exit_2(tmp_path: Path, command: str) -> None:
    argv = [command, "-f", write(tmp_path, "vm.yaml", VM), "--kubevirt-version", "v1.5"]
    argv += {"resize": ["--instancetype", "u1.small"], "plan": ["--instancetype", "u1.small"]}.get(command, [])
    code, out, err = run_main(*argv)
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert "KubeVirt v1.5.0 is older than the oldest release" in err and "v1.7.x" in err


@pytest.mark.parametrize("argv", [["serve", "--dev"], ["playground"], ["audit", "--kubeconfig", "/nonexistent"],
                                  ["sweep", "--kubeconfig", "/nonexistent"]])
def test_the_serving_and_fleet_commands_refuse_a_bad_version(argv: list[str]) -> None:
    code, _, err = run_main(*argv, "--kubevirt-version", "one-point-eight")
    assert code == 2 and "Traceback" not in err
    assert len(err.splitlines()) == 1 and "--kubevirt-version" in err and "cannot parse KubeVirt version" in err


def test_help_names_the_option_on_every_answering_command() -> None:
    from instancetype_webhook.cli import build_parser

    subparsers = next(a for a in build_parser()._actions if a.dest == "command")
    for name in ("expand", "validate", "domxml", "plan", "resize", "playground", "serve", "audit", "sweep",
                 "conformance"):
        assert "--kubevirt-version" in subparsers.choices[name].format_help(), name


# -- the inferFromVolume example (docs/guides/infer-from-volume.md), offline: `expand`/`validate` read the volume
# objects from -f files and run the VM mutator's stage first (examples/infer/, examples/vm-create-infer.json;
# was tests/cli/test_infer_examples.py)

INFER_VM, INFER_VOLUMES = str(ROOT / "examples/infer/vm.yaml"), str(ROOT / "examples/infer/volumes.yaml")


def test_expand_infers_from_the_datasource():
    code, out, err = run_main("expand", "-f", INFER_VM, "-f", INFER_VOLUMES, "-o", "json")
    assert code == 0, err
    flat = json.loads(out)
    named = yaml.safe_load(Path(INFER_VM).read_text())
    named["spec"]["instancetype"], named["spec"]["preference"] = {"name": "u1.medium"}, {"name": "fedora"}
    code, by_name, err = run_main("expand", "-f", "-", "-o", "json", stdin=json.dumps(named))
    assert code == 0, err
    assert flat == json.loads(by_name)
    assert flat["spec"]["template"]["spec"]["domain"]["memory"] == {"guest": "4Gi"}


def test_validate_and_the_missing_datasource():
    assert run_main("validate", "-f", INFER_VM, "-f", INFER_VOLUMES)[0] == 0
    code, _, err = run_main("expand", "-f", INFER_VM)
    assert code == 1
    assert 'datasources.cdi.kubevirt.io "fedora" not found' in err


def test_the_admission_review_example_carries_the_same_vm():
    review = json.loads((ROOT / "examples/vm-create-infer.json").read_text())
    assert review["request"]["object"] == yaml.safe_load(Path(INFER_VM).read_text())


# -- one way to name the release: --kubevirt-version, else INSTANCETYPE_WEBHOOK_KUBEVIRT_VERSION, for every command;
# an empty or unparseable value (flag or variable) is one line naming where it came from, and exit status 2

RELEASE_ENV = "INSTANCETYPE_WEBHOOK_KUBEVIRT_VERSION"


def command_argv(command: str, tmp_path: Path) -> list[str]:
    """A call of `command` that would otherwise get going (offline files; a cluster that does not exist)."""
    vm = write(tmp_path, "vm.yaml", VM)
    return {
        "expand": ["expand", "-f", vm], "validate": ["validate", "-f", vm], "domxml": ["domxml", "-f", vm],
        "resize": ["resize", "-f", vm, "--instancetype", "u1.small"],
        "plan": ["plan", "-f", vm, "--instancetype", "u1.small"],
        "conformance": ["conformance", str(CONFORMANCE)],
        "serve": ["serve", "--catalog", str(tmp_path), "--port", "0", "--metrics-port", "0"],
        "playground": ["playground", "--port", "0"],
        "audit": ["audit", "--kubeconfig", str(tmp_path / "no-kubeconfig")],
        "sweep": ["sweep", "--kubeconfig", str(tmp_path / "no-kubeconfig")],
    }[command]


EVERY_COMMAND = ["expand", "validate", "domxml", "resize", "plan", "conformance", "serve", "playground", "audit",
                 "sweep"]


@pytest.mark.parametrize("value, reason", [("", "empty; name a release"), ("  ", "empty; name a release"),
                                           ("garbage", "cannot parse KubeVirt version 'garbage'"),
                                           ("v1.5", "older than the oldest release")])
@pytest.mark.parametrize("where", ["flag", "variable"])
@pytest.mark.parametrize("command", EVERY_COMMAND)
def test_a_bad_release_is_refused_alike_by_every_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         command: str, where: str, value: str, reason: str) -> None:
    argv = command_argv(command, tmp_path)
    if where == "flag":
        monkeypatch.setenv(RELEASE_ENV, "v1.8.4")  # the flag wins over a good variable
        argv += ["--kubevirt-version", value]
    else:
        monkeypatch.setenv(RELEASE_ENV, value)
    code, out, err = run_main(*argv)
    assert (code, out) == (2, "")
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    named = "--kubevirt-version" if where == "flag" else RELEASE_ENV
    assert f"{named}: " in err and reason in err


def test_the_variable_names_the_release_offline_and_the_flag_wins(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    vm = write(tmp_path, "vm.yaml", VM)
    monkeypatch.setenv(RELEASE_ENV, "v1.7.4")
    code, out, err = run_main("expand", "-f", vm)
    assert code == 0 and "creationTimestamp: null" in out and err == ""
    assert "creationTimestamp" not in run_main("expand", "-f", vm, "--kubevirt-version", "main")[1]
    monkeypatch.setenv(RELEASE_ENV, "v1.8")  # an assumed release is said, whichever names it
    assert run_main("expand", "-f", vm)[2] == "note: answering as KubeVirt v1.8.4 (profile v1.8); patch not " \
                                              "given: v1.8.4 assumed\n"


def test_release_option_says_where_the_release_came_from(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(RELEASE_ENV, raising=False)
    assert release_option(None).name == "main"
    assert release_option(None, default="auto") is None
    monkeypatch.setenv(RELEASE_ENV, "v1.9.0")
    assert (release_option(None).name, release_option(None).source) == ("v1.9.0", RELEASE_ENV)
    assert release_option("v1.7.4").source == "--kubevirt-version"
    with pytest.raises(InputError, match="^--compare-kubevirt-version: empty"):
        release_option("", flag="--compare-kubevirt-version")


# -- every form a user has the objects in, on the commands that read them: each file of examples/ (what `curl`
# sends the webhook) with expand, validate and domxml; an UPDATE AdmissionReview; directories and -R; Lists

EXAMPLES = ROOT / "examples"
# file: (expand, validate, domxml) exit status, and a line each says when it answers 1 or 2
EXAMPLE_ANSWERS = {
    "vm.json": ((0, 0, 0), ""),
    "vm-create-expand.json": ((0, 0, 0), ""),
    "vm-create-reference.json": ((0, 0, 0), ""),
    "vm-conflict.json": ((1, 1, 1), "conflicts with selected instance type"),
    "vm-missing-reference.json": ((1, 0, 1), '"u1.colossal" not found'),  # validating alone: a warning
    "vm-create-infer.json": ((1, 1, 1), 'datasources.cdi.kubevirt.io "fedora" not found'),
    "instancetype-object.json": ((2, 0, 2), ""),
    "instancetype-object-invalid.json": ((2, 1, 2), "spec.cpu in body is required"),
    "unrelated-kind.json": ((2, 2, 2), ""),
}
# what expand and domxml (and validate, for the ConfigMap) say of a review of anything else than a VM
NOT_A_VM = "it holds an AdmissionReview of a CREATE of a {} by alice"
KIND_OF = {"instancetype-object.json": "VirtualMachineInstancetype",
           "instancetype-object-invalid.json": "VirtualMachineInstancetype", "unrelated-kind.json": "ConfigMap"}


def test_every_example_has_its_answer_here():
    assert sorted(EXAMPLE_ANSWERS) == sorted(p.name for p in EXAMPLES.glob("*.json"))


@pytest.mark.parametrize("name", sorted(EXAMPLE_ANSWERS))
def test_each_example_works_with_expand_validate_and_domxml(name):
    codes, line = EXAMPLE_ANSWERS[name]
    for command, expected in zip(("expand", "validate", "domxml"), codes, strict=True):
        code, out, err = run_main(command, "-f", str(EXAMPLES / name))
        assert code == expected, (command, out, err)
        assert "Traceback" not in err
        if expected == 0:
            assert out and (command == "validate" or err == ""), (command, err)
        elif expected == 1:
            assert line in (out if command == "validate" else err), (command, out, err)
        else:
            assert err.startswith("error: ") and "no VirtualMachine" in err, err
            assert NOT_A_VM.format(KIND_OF[name]) in err, err
            assert len(err.splitlines()) == 1 and out == "", (command, err)


@pytest.mark.parametrize("name", [n for n, (codes, _) in EXAMPLE_ANSWERS.items() if codes[1] != 2
                                  and json.loads((EXAMPLES / n).read_text())["kind"] == "AdmissionReview"])
def test_validate_answers_what_the_webhook_answers_curl(name):
    """The API server's path for the same review: /mutate, then /validate on what it stored."""
    from instancetype_webhook.admission.mutate import mutate
    from instancetype_webhook.admission.validate import validate
    from tests.kit.admission import catalog_context, decide, stored

    review = json.loads((EXAMPLES / name).read_text())
    ctx = catalog_context()
    response = decide(mutate, review, ctx)
    if response["allowed"]:
        review["request"]["object"] = stored(review["request"]["object"], response)
        response = decide(validate, review, ctx)
    code, out, _ = run_main("validate", "-f", str(EXAMPLES / name), "-o", "json")
    ours = json.loads(out)
    assert ours["allowed"] == response["allowed"] and code == (0 if response["allowed"] else 1)
    if not response["allowed"]:
        assert ours["status"]["message"] == response["status"]["message"]


@pytest.mark.parametrize("name", ["vm-create-expand.json", "vm-create-reference.json", "vm-create-infer.json"])
def test_a_review_answers_as_its_object_does(tmp_path, name):
    review = json.loads((EXAMPLES / name).read_text())
    (tmp_path / "vm.json").write_text(json.dumps(review["request"]["object"]))  # in its order: the output's
    vm = str(tmp_path / "vm.json")
    volumes = ["-f", INFER_VOLUMES]
    for command in ("expand", "domxml"):
        by_review = run_main(command, "-f", str(EXAMPLES / name), *volumes)
        assert by_review.code == 0, by_review.err
        assert by_review == run_main(command, "-f", vm, *volumes)
        assert by_review == run_main(command, "-f", "-", *volumes, stdin=(EXAMPLES / name).read_text())


def test_the_namespace_comes_from_the_request(tmp_path):
    review = json.loads((EXAMPLES / "vm-create-reference.json").read_text())
    review["request"]["namespace"] = "team-a"
    del review["request"]["object"]["metadata"]["namespace"]
    code, out, err = run_main("expand", "-f", write(tmp_path, "r.yaml", review), "-o", "json")
    assert code == 0, err
    assert json.loads(out)["metadata"]["namespace"] == "team-a"


def update_review(tmp_path: Path, c: dict) -> str:
    """The DENIED case as the API server sends it: an UPDATE AdmissionReview with the stored VM."""
    vm, old = c["input"]["vm"], c["input"]["oldVm"]
    review = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
        "uid": "u", "kind": {"group": "kubevirt.io", "version": "v1", "kind": "VirtualMachine"},
        "operation": "UPDATE", "namespace": vm["metadata"]["namespace"], "userInfo": {"username": "bob"},
        "object": vm, "oldObject": old}}
    return write(tmp_path, "update.yaml", review)


def test_an_update_review_is_an_update_for_all_three_commands(tmp_path):
    c = case(DENIED)
    argv = write_case(tmp_path, c)
    with_old = {command: run_main(command, *argv) for command in ("expand", "validate", "domxml")}
    objects = [doc for doc in yaml.safe_load_all(Path(argv[1]).read_text()) if doc["kind"] != "VirtualMachine"]
    files = ["-f", update_review(tmp_path, c), "-f", write(tmp_path, "objects.yaml", *objects), "--catalog", argv[3]]
    for command, answer in with_old.items():
        assert answer.code == 1
        assert run_main(command, *files) == answer, command
    code, _, err = run_main("expand", *files, "--old", argv[5])
    assert code == 2 and err.startswith("error: --old and ") and "request.oldObject both give the stored VM" in err


def test_a_delete_review_says_there_is_nothing_to_check(tmp_path):
    review = json.loads((EXAMPLES / "vm.json").read_text())
    delete = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
        "uid": "d", "kind": {"group": "kubevirt.io", "version": "v1", "kind": "VirtualMachine"},
        "operation": "DELETE", "namespace": "default", "oldObject": review}}
    code, out, err = run_main("expand", "-f", write(tmp_path, "d.yaml", delete))
    assert (code, out) == (2, "")
    assert err.splitlines() == [f"error: no VirtualMachine in {tmp_path / 'd.yaml'}: it holds an AdmissionReview "
                                "of a DELETE of a VirtualMachine, which carries no object to check"]


@pytest.mark.parametrize("command, extra", [("expand", []), ("validate", []), ("domxml", []),
                                            ("resize", ["--instancetype", "u1.small"]),
                                            ("plan", ["--preference", "VirtualMachinePreference/mine"])])
def test_every_command_reads_a_directory_and_r_its_subdirectories(tmp_path, command, extra):
    (tmp_path / "vms" / "team").mkdir(parents=True)
    preference = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachinePreference",
                  "metadata": {"name": "mine", "namespace": "ns"}, "spec": {"devices": {"preferredDiskBus": "sata"}}}
    vm = {**VM, "spec": {**VM["spec"], "preference": {"kind": "VirtualMachinePreference", "name": "mine"}}}
    if command in ("resize", "plan"):  # a flat VM that runs (what both take)
        vm = json.loads(run_main("expand", "-f", "-", "-o", "json", "--provenance",
                                 stdin=yaml.safe_dump_all([vm, preference]))[1])
    (tmp_path / "vms" / "vm.yaml").write_text(yaml.safe_dump(vm))
    (tmp_path / "vms" / "team" / "preference.json").write_text(json.dumps(preference))
    one_file = run_main(command, "-f", "-", *extra, stdin=yaml.safe_dump_all([vm, preference]))
    assert one_file.code in (0, 1) and "error" not in one_file.err, one_file  # 1: refused
    assert run_main(command, "-f", str(tmp_path / "vms"), "-R", *extra) == one_file
    without = run_main(command, "-f", str(tmp_path / "vms"), *extra)  # the preference in team/ is not read
    assert without != one_file and '"mine" not found' in without.out + without.err, without


def test_a_list_holds_the_vm_and_its_objects(tmp_path):
    preference = {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachinePreference",
                  "metadata": {"name": "mine", "namespace": "ns"}, "spec": {"devices": {"preferredDiskBus": "sata"}}}
    vm = {**VM, "spec": {**VM["spec"], "preference": {"kind": "VirtualMachinePreference", "name": "mine"}}}
    listed = {"apiVersion": "v1", "kind": "List", "items": [vm, preference]}
    code, out, err = run_main("expand", "-f", "-", "-o", "json", stdin=json.dumps(listed, indent="\t"))
    assert code == 0, err
    assert json.loads(out)["spec"]["template"]["spec"]["domain"]["devices"]["disks"][0]["disk"]["bus"] == "sata"


def test_two_vms_name_where_they_came_from(tmp_path):
    code, _, err = run_main("expand", "-f", write(tmp_path, "vms.yaml", VM, VM))
    where = tmp_path / "vms.yaml"
    assert code == 2 and err == f"error: 2 documents of kind VirtualMachine in {where}; give exactly one\n"
