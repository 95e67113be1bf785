"""The runner's `expectedLiveUpdate` check (conformance/liveupdate.py): the case's VM started, the running VMI
with `input.liveUpdate.vmi` merged over it, edited to `input.liveUpdate.newVm`, answered in the case's shape."""
import copy
import json

import pytest

from instancetype_webhook.conformance import liveupdate
from instancetype_webhook.conformance.compare import Difference
from tests.kit.shared_data import CONFORMANCE

HOTPLUG = "liveupdate.cpu.sockets-up.within-maxsockets"  # live: sockets patched, HotVCPUChange
RESTART = "liveupdate.memory.below-guest-at-boot"  # restart required, nothing patched
DENIED = "liveupdate.memory.explicit-maxguest.unaligned"  # the update is refused
SYNC_ERROR = "liveupdate.cpu.hotplug-in-progress"  # the running VMI (input.liveUpdate.vmi) has a hotplug going on
LIVE_CASES = sorted(p.stem for p in CONFORMANCE.glob("*.json") if "expectedLiveUpdate" in json.loads(p.read_text()))


def load(name: str) -> dict:
    return json.loads((CONFORMANCE / f"{name}.json").read_text())


@pytest.mark.parametrize("name", [HOTPLUG, RESTART, DENIED, SYNC_ERROR])
def test_the_answer_is_upstreams(name):
    case = load(name)
    assert liveupdate.plan_answer(liveupdate.case_plan(case)) == case["expectedLiveUpdate"]
    assert liveupdate.check_live_update(case) is None


def test_every_live_update_case_passes():
    assert len(LIVE_CASES) > 20
    assert {name: liveupdate.check_live_update(load(name)) for name in LIVE_CASES} == dict.fromkeys(LIVE_CASES)


def test_an_allowed_answer_has_every_member_and_a_denial_only_the_admission():
    allowed = liveupdate.plan_answer(liveupdate.case_plan(load(HOTPLUG)))
    assert set(allowed) == {"admission", "restartRequired", "vmiPatched", "conditions"}
    assert allowed["admission"] == {"allowed": True} and allowed["restartRequired"] is None
    assert allowed["conditions"] == [{"type": "HotVCPUChange", "status": "True"}]
    denied = liveupdate.plan_answer(liveupdate.case_plan(load(DENIED)))
    assert set(denied) == {"admission"} and denied["admission"]["allowed"] is False
    assert denied["admission"]["status"]["reason"] == "Invalid"
    assert "syncError" in liveupdate.plan_answer(liveupdate.case_plan(load(SYNC_ERROR)))


def test_the_running_vmi_of_the_case_decides():
    case = load(SYNC_ERROR)
    del case["input"]["liveUpdate"]["vmi"]  # no hotplug going on in the VMI as started
    assert "syncError" not in liveupdate.plan_answer(liveupdate.case_plan(case))
    assert liveupdate.check_live_update(case) is not None


def test_an_altered_answer_is_the_first_difference():
    case = load(HOTPLUG)
    wrong = copy.deepcopy(case)
    wrong["expectedLiveUpdate"]["restartRequired"] = "a restart"
    assert liveupdate.check_live_update(wrong) == Difference("restartRequired", None, "a restart")
    sockets = case["expectedLiveUpdate"]["vmiPatched"]["spec.domain.cpu.sockets"]
    wrong = copy.deepcopy(case)
    wrong["expectedLiveUpdate"]["vmiPatched"]["spec.domain.cpu.sockets"] = sockets + 1
    assert liveupdate.check_live_update(wrong) == Difference("vmiPatched.spec.domain.cpu.sockets", sockets,
                                                             sockets + 1)
