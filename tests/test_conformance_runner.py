"""The conformance runner on a temporary directory: passing, altered and unreadable cases."""
import io
import json
import shutil

import pytest

from app import conformance
from app.cli import main
from tests.conftest import CONFORMANCE

PASSING = "requirements.memory-unmet"
WITH_DOMXML = next(p.stem for p in sorted(CONFORMANCE.glob("*.json")) if "domxml" in json.loads(p.read_text()))


def builtin_sections() -> dict:
    """The runner's own sections only (a plugin imported by another test may have added its members)."""
    return {name: section for name, section in conformance.SECTIONS.items() if "." not in name
            or name == "expectedValidate.instancetype"}


@pytest.fixture()
def cases(tmp_path, monkeypatch):
    # The runner itself is under test: no plugin section checks, domxml unchecked.
    monkeypatch.setattr(conformance, "PLUGIN_MODULES", ())
    monkeypatch.setattr(conformance, "SECTIONS", builtin_sections())
    conformance.register_section("domxml", conformance.check_domxml_unavailable)
    for name in (PASSING, WITH_DOMXML):
        shutil.copy(CONFORMANCE / f"{name}.json", tmp_path / f"{name}.json")
    return tmp_path


def altered(tmp_path, name, change):
    case = json.loads((CONFORMANCE / f"{name}.json").read_text())
    change(case)
    case["name"] = name + ".altered"
    (tmp_path / f"{name}.altered.json").write_text(json.dumps(case))


def run(directory, *extra):
    out = io.StringIO()
    status = conformance.run(directory, out, *extra)
    return status, out.getvalue().splitlines()


def test_passing_cases(cases):
    status, lines = run(cases)
    assert status == 0
    assert lines[-1] == "2 passed, 0 failed"
    assert any(line.startswith("domxml: not checked in 1 case(s)") for line in lines)


def test_altered_expansion_is_reported_with_path_and_values(cases):
    def change(case):
        case["expected"]["vm"]["spec"]["template"]["spec"]["domain"]["cpu"]["sockets"] = 7

    altered(cases, PASSING, change)
    status, lines = run(cases)
    assert status == 1
    assert lines[-1] == "2 passed, 1 failed"
    failing = [line for line in lines if line.startswith("FAIL")]
    assert failing == [f"FAIL {PASSING}.altered [expected] vm.spec.template.spec.domain.cpu.sockets: got 2, want 7"]


def test_altered_validation_message_is_reported(cases):
    def change(case):
        case["expectedValidate"]["instancetype"]["causes"][0]["field"] = "spec.preference"

    altered(cases, PASSING, change)
    status, lines = run(cases)
    assert status == 1
    (failing,) = [line for line in lines if line.startswith("FAIL")]
    assert "[expectedValidate.instancetype] causes[*].field" in failing
    assert '["spec.instancetype"]' in failing and '["spec.preference"]' in failing


def test_error_where_a_vm_was_expected(cases):
    def change(case):
        case["input"]["clusterInstancetypes"] = []

    altered(cases, PASSING, change)
    status, lines = run(cases)
    (failing,) = [line for line in lines if line.startswith("FAIL")]
    assert failing.startswith(f"FAIL {PASSING}.altered [expected] result: got \"notFound error: ")
    assert 'want "the expanded VM"' in failing


def test_quantities_compare_by_value(cases):
    def change(case):
        case["expected"]["vm"]["spec"]["template"]["spec"]["domain"]["memory"]["guest"] = 1073741824

    altered(cases, PASSING, change)
    status, lines = run(cases)
    assert status == 0 and lines[-1] == "3 passed, 0 failed"


def test_list_order_is_significant():
    assert conformance.first_difference([1, 2], [2, 1]) == conformance.Difference("[0]", 1, 2)
    assert conformance.first_difference({"a": 1, "b": 2}, {"b": 2, "a": 1}) is None
    assert conformance.first_difference("4Gi", "4294967296") is None
    assert conformance.first_difference("1", "one") is not None


def test_filter_and_verbose(cases):
    status, lines = run(cases, "memory-unmet", True)
    assert lines == [
        f"PASS {PASSING} (expected, expectedValidate.instancetype)",
        "sections checked: expected 1, expectedValidate.instancetype 1",
        "1 passed, 0 failed",
    ]


def test_unreadable_case_fails_without_stopping_the_run(cases):
    (cases / "broken.json").write_text("{not json")
    status, lines = run(cases)
    assert status == 1 and lines[-1] == "2 passed, 1 failed"
    assert any(line.startswith("FAIL broken [file]") for line in lines)


def test_registered_section_checks_domxml(cases, monkeypatch):
    seen = []

    def check(case):
        seen.append(case["name"])
        return conformance.Difference("domxml.xml", "<domain/>", "<domain type='kvm'/>")

    conformance.register_section("domxml", check)
    status, lines = run(cases)
    assert seen == [WITH_DOMXML] and status == 1
    assert any(line.startswith(f"FAIL {WITH_DOMXML} [domxml] domxml.xml") for line in lines)


def test_plugin_modules_register_section_checks(tmp_path, monkeypatch):
    plugin = tmp_path / "plugins" / "fake_domxml_plugin.py"
    plugin.parent.mkdir()
    plugin.write_text(
        "from app.conformance import Difference, register_section\n"
        "register_section('domxml', lambda case: Difference('domxml.xml', None, None, note='rendered nothing'))\n"
    )
    monkeypatch.syspath_prepend(str(plugin.parent))
    monkeypatch.setattr(conformance, "PLUGIN_MODULES", ("fake_domxml_plugin", "no_such_plugin_module"))
    monkeypatch.setattr(conformance, "SECTIONS", builtin_sections())
    shutil.copy(CONFORMANCE / f"{WITH_DOMXML}.json", tmp_path / f"{WITH_DOMXML}.json")
    status, lines = run(tmp_path)
    assert status == 1
    assert lines == [
        f"FAIL {WITH_DOMXML} [domxml] domxml.xml: rendered nothing",
        "sections checked: domxml 1, expected 1, expectedValidate.instancetype 1",
        "0 passed, 1 failed",
    ]


def test_cli_exit_status(cases, capsys):
    assert main(["conformance", str(cases)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "2 passed, 0 failed"
    assert main(["conformance", str(cases / "nope")]) == 2
