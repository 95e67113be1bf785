"""The runner's domain XML checks (conformance/domxml.py): `domxml.expected` (input.vmi rendered) and
`domxml.fromVm` (the flat VM started as virt-controller starts it, then rendered), each against upstream's XML or
its error text."""
import copy
import io
import json
import shutil

import pytest

from instancetype_webhook.conformance import domxml, runner
from instancetype_webhook.conformance.compare import Difference
from tests.kit.shared_data import CONFORMANCE

PASSING = "requirements.memory-unmet"
DENIED = "update.preference.name-changed-revision-kept"
WITH_DOMXML = next(p.stem for p in sorted(CONFORMANCE.glob("*.json")) if "domxml" in json.loads(p.read_text()))
REFUSED = "arch.s390x.efi.no-firmware"  # upstream refuses to render both members


def load(name: str) -> dict:
    return json.loads((CONFORMANCE / f"{name}.json").read_text())


@pytest.fixture()
def cases(tmp_path):
    for name in (PASSING, WITH_DOMXML, DENIED):
        shutil.copy(CONFORMANCE / f"{name}.json", tmp_path / f"{name}.json")
    return tmp_path


def test_the_real_domxml_checks_pass_the_case(cases):
    out = io.StringIO()
    status = runner.run(cases, out, sections=runner.SECTIONS)
    lines = out.getvalue().splitlines()
    assert status == 0 and lines[-1] == "3 passed, 0 failed"


def test_both_members_of_a_case_match():
    case = load(WITH_DOMXML)
    assert domxml.check_expected(case) is None
    assert domxml.check_from_vm(case) is None


def test_upstreams_error_is_matched_by_its_text():
    case = load(REFUSED)
    assert "error" in case["domxml"]["expected"] and "error" in case["domxml"]["fromVm"]
    assert domxml.check_expected(case) is None and domxml.check_from_vm(case) is None
    ours = case["domxml"]["expected"]["error"]
    case["domxml"]["expected"]["error"] = "another refusal"
    assert domxml.check_expected(case) == Difference("domxml.expected.error", ours, "another refusal")


def test_an_error_where_xml_was_expected_and_xml_where_an_error_was():
    refused = load(REFUSED)
    error = refused["domxml"]["expected"]["error"]
    refused["domxml"]["expected"] = {"xml": "<domain/>"}
    assert domxml.check_expected(refused) == Difference("domxml.expected", f"error: {error}", "xml")
    rendered = load(WITH_DOMXML)
    rendered["domxml"]["fromVm"] = {"error": "upstream refused"}
    assert domxml.check_from_vm(rendered) == Difference("domxml.fromVm", "xml", "error: upstream refused")


def test_other_xml_is_a_difference_with_where_it_differs():
    case = load(WITH_DOMXML)
    case["domxml"]["expected"]["xml"] = case["domxml"]["expected"]["xml"].replace("<domain ", "<domain id='9' ", 1)
    diff = domxml.check_expected(case)
    assert diff is not None and diff.path.startswith("domxml.expected")
    assert (diff.ours, diff.expected) == ("our XML", "upstream's XML")


def test_from_vm_without_a_flat_vm():
    case = load(WITH_DOMXML)
    del case["expected"]["vm"]
    assert domxml.check_from_vm(case) == Difference("domxml.fromVm", "no flat VM", "xml")
    case["domxml"]["fromVm"] = {"error": "the VM was refused"}
    assert domxml.check_from_vm(case) is None


def test_the_started_vmi_takes_the_input_vmis_uid_and_firmware_uuid():
    case = load(WITH_DOMXML)
    input_vmi = case["domxml"]["input"]["vmi"]
    vmi = domxml.started_vmi(case)
    assert vmi["kind"] == "VirtualMachineInstance"
    assert vmi["metadata"]["uid"] == input_vmi["metadata"]["uid"]
    assert vmi["spec"]["domain"]["firmware"]["uuid"] == input_vmi["spec"]["domain"]["firmware"]["uuid"]
    own = copy.deepcopy(case)
    own["expected"]["vm"]["spec"]["template"]["spec"]["domain"].setdefault("firmware", {})["uuid"] = "own-uuid"
    assert domxml.started_vmi(own)["spec"]["domain"]["firmware"]["uuid"] == "own-uuid"
    assert case["expected"]["vm"] == load(WITH_DOMXML)["expected"]["vm"]  # the case is not changed


def test_render_member_renders_what_it_is_given():
    case = load(WITH_DOMXML)
    xml = domxml.render_member(case, lambda: case["domxml"]["input"]["vmi"])
    assert xml.lstrip().startswith("<domain")
    assert input_name(case) in xml


def input_name(case: dict) -> str:
    vmi = case["domxml"]["input"]["vmi"]["metadata"]
    return f"{vmi['namespace']}_{vmi['name']}"
