"""The public conformance cases with a `domxml` section and the runner's plugin (domxml/conformance.py): each
case's `domxml.expected` (input.vmi) and `domxml.fromVm` (the flat VM started as virt-controller does), both
under the case's kubevirtConfiguration, are checked in tests/kubevirt/test_corpus.py; here, what the corpus
must hold and the plugin's own behaviour."""
from __future__ import annotations

import copy

from instancetype_webhook.conformance.domxml import check_expected, check_from_vm, started_vmi
from instancetype_webhook.domxml import render_domain
from tests.kit.shared_data import conformance_cases

CASES = [case for case in conformance_cases() if "domxml" in case]
FROM_VM = [case for case in CASES if "fromVm" in case["domxml"]]


def test_the_public_corpus_has_domxml_cases_of_every_architecture():
    assert len(CASES) >= 71 and len(FROM_VM) >= 71
    arches = {(c["domxml"]["input"]["vmi"]["spec"].get("architecture") or "amd64") for c in CASES}
    assert arches == {"amd64", "arm64", "s390x"}


def test_the_started_vm_gets_the_auto_attached_input_device():
    """A flat VM whose template asks for autoattachInputDevice gets `default-0`, a USB tablet, when it starts:
    fromVm differs from expected exactly there (the public corpus has 4 such cases)."""
    attached = [c for c in FROM_VM if "vm" in c["expected"] and c["expected"]["vm"]["spec"]["template"]["spec"]
                ["domain"].get("devices", {}).get("autoattachInputDevice") and "xml" in c["domxml"]["fromVm"]]
    assert len(attached) >= 4
    for case in attached:
        vmi = started_vmi(case)
        assert vmi["spec"]["domain"]["devices"]["inputs"] == [{"name": "default-0"}]
        assert '<input type="tablet" bus="usb">' in case["domxml"]["fromVm"]["xml"]
        assert 'alias name="ua-default-0"' in render_domain(vmi)
        assert check_from_vm(case) is None and check_expected(case) is None


def test_a_wrong_answer_is_reported():
    case = copy.deepcopy(FROM_VM[0])
    case["domxml"]["expected"] = {"xml": case["domxml"]["expected"].get("xml", "<domain/>").replace(
        "<memory unit", "<memory extra=\"1\" unit")}
    assert check_expected(case) is not None


def test_render_does_not_modify_its_input():
    vmi = CASES[0]["domxml"]["input"]["vmi"]
    before = copy.deepcopy(vmi)
    render_domain(vmi)
    assert vmi == before
