"""The conformance runner answering as a KubeVirt release: every public case for v1.7.4, v1.8.4, v1.9.0 and main
(the release's expected members from conformance-releases/<R>/ overlaid on the base case), the overlay rules,
the oracleError skips and bad --kubevirt-version values."""
import io
import json
import shutil

import pytest

from instancetype_webhook.cli import main
from instancetype_webhook.conformance import runner
from instancetype_webhook.kubevirt.releases import resolve
from tests.kit.shared_data import CONFORMANCE

RELEASES = CONFORMANCE.parent / "conformance-releases"


def _run(directory, release, **kw):
    out = io.StringIO()
    status = runner.run(directory, out, release=resolve(release), **kw)
    return status, out.getvalue()


@pytest.mark.parametrize(("release", "summary"), [
    ("main", "240 passed, 0 failed\n"),
    ("v1.9.0", "240 passed, 0 failed\n"),
    ("v1.8.4", "240 passed, 0 failed\n"),
    ("v1.7.4", "239 passed, 0 failed, 1 skipped (oracleError: the release cannot take the case)\n"),
])
def test_every_public_case_passes_as_each_release(release, summary):
    status, text = _run(CONFORMANCE, release)
    header = f"answering as KubeVirt {release} (profile {release[:4]})\n"
    assert text.startswith(header) is (release != "main")
    assert text.endswith(summary), text[-2000:]
    assert status == 0


# v1.8.4 answers differ from main's in these cases: answering as main against them must fail (the overlay is used).
@pytest.mark.parametrize(("case", "member"), [
    ("common-instancetype.rt1.micro.typical", "domxml.expected"),  # no NUMA <distances> before main
    ("common-preference.fedora.with-u1.large", "domxml.expected"),  # /usr/share/OVMF before v1.9
    ("common-preference.windows.7.virtio.preference-only", "expected"),  # preferredVideoType pruned
    ("revision.preference.legacy-v1alpha2-data", "expected"),  # register.go:43
])
def test_release_answers_differ_from_mains(tmp_path, case, member):
    cases = tmp_path / "conformance"
    cases.mkdir()
    shutil.copy(CONFORMANCE / f"{case}.json", cases)
    (tmp_path / "conformance-releases" / "main").mkdir(parents=True)  # a "release" whose answers are v1.8.4's
    shutil.copytree(RELEASES / "v1.8.4", tmp_path / "conformance-releases" / "v1.8.4")
    assert _run(cases, "v1.8.4")[0] == 0
    base = json.loads((cases / f"{case}.json").read_text())
    overlaid = runner.overlay(base, json.loads((RELEASES / "v1.8.4" / f"{case}.json").read_text()))
    (cases / f"{case}.json").write_text(json.dumps(overlaid))
    status, text = _run(cases, "main")
    assert status == 1 and f"FAIL {case} [{member}]" in text


def test_missing_overlay_file_means_the_base_answers_and_oracle_error_skips(tmp_path):
    cases = tmp_path / "conformance"
    cases.mkdir()
    for name in ("requirements.memory-unmet", "common-instancetype.rt1.micro.typical"):
        shutil.copy(CONFORMANCE / f"{name}.json", cases)
    answers = tmp_path / "conformance-releases" / "v1.9.0"
    answers.mkdir(parents=True)
    (answers / "requirements.memory-unmet.json").write_text(json.dumps({"oracleError": "v1.9 refuses it"}))
    status, text = _run(cases, "v1.9.0", verbose=True)
    # no answers file for the rt1 case: main's answers (with <distances>) are expected, v1.9.0 has none
    assert "FAIL common-instancetype.rt1.micro.typical [domxml.expected]" in text
    assert "SKIP requirements.memory-unmet (oracleError: v1.9 refuses it)" in text
    assert text.endswith("0 passed, 1 failed, 1 skipped (oracleError: the release cannot take the case)\n")
    assert status == 1


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
