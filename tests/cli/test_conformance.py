"""`instancetype-webhook conformance DIR`: the exit status, the filters, a directory that is not one, and
--kubevirt-version (the runner itself: tests/conformance/test_runner.py)."""
import json
import shutil

import pytest

from instancetype_webhook.cli import main
from tests.kit.cli import run_main
from tests.kit.shared_data import CONFORMANCE

PASSING = "requirements.memory-unmet"
DENIED = "update.preference.name-changed-revision-kept"
WITH_DOMXML = next(p.stem for p in sorted(CONFORMANCE.glob("*.json")) if "domxml" in json.loads(p.read_text()))


@pytest.fixture()
def cases(tmp_path):
    for name in (PASSING, WITH_DOMXML, DENIED):
        shutil.copy(CONFORMANCE / f"{name}.json", tmp_path / f"{name}.json")
    return tmp_path


def test_cli_exit_status_and_filters(cases, capsys):
    assert main(["conformance", str(cases)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "3 passed, 0 failed"
    assert main(["conformance", str(cases), "--category", "update", "-k", "preference"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "1 passed, 0 failed"
    assert main(["conformance", str(cases / "nope")]) == 2


def test_cli_needs_a_directory(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["conformance"])
    assert exc.value.code == 2 and "DIR" in capsys.readouterr().err


def test_a_failing_case_exits_1_and_verbose_lists_the_passing_ones(cases):
    (cases / "broken.json").write_text("{not json")
    code, out, err = run_main("conformance", str(cases))
    assert code == 1 and err == ""
    assert out.splitlines()[-1] == "3 passed, 1 failed"
    assert [line.split()[:2] for line in out.splitlines() if line.startswith("FAIL")] == [["FAIL", "broken"]]
    code, out, _ = run_main("conformance", str(cases), "-v", "-k", "memory")
    assert code == 0 and out.splitlines()[0].startswith(f"PASS {PASSING} (")


def test_not_a_directory_is_one_error_line(cases):
    code, out, err = run_main("conformance", str(cases / f"{PASSING}.json"))
    assert (code, out) == (2, "")
    assert err == f"error: {cases / PASSING}.json: not a directory\n"


def test_cli_kubevirt_version(tmp_path, capsys):
    assert main(["conformance", "--kubevirt-version", "v1.8.4", "-k", "rt1.micro", str(CONFORMANCE)]) == 0
    assert "answering as KubeVirt v1.8.4 (profile v1.8)" in capsys.readouterr().out
    assert main(["conformance", "--kubevirt-version", "v1.x", str(CONFORMANCE)]) == 2
    assert "error: --kubevirt-version: cannot parse KubeVirt version 'v1.x'" in capsys.readouterr().err
    assert main(["conformance", "--kubevirt-version", "v1.6.3", str(CONFORMANCE)]) == 2
    assert "older than the oldest release" in capsys.readouterr().err
    lonely = tmp_path / "conformance"
    lonely.mkdir()
    assert main(["conformance", "--kubevirt-version", "v1.8.4", str(lonely)]) == 2
    assert "no answers of KubeVirt v1.8.4" in capsys.readouterr().err
