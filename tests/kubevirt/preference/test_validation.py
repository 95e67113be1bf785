"""Spread-topology divisibility at VM admission (spec 3.3, E5)."""
import pytest

from instancetype_webhook.kubevirt.preference.validation import (
    INSTANCETYPE_CPU_GUEST_PATH,
    check_spread,
    instancetype_guest_cpus,
    uint32,
)

SPREAD = {"cpu": {"preferredCPUTopology": "spread"}}


def it(n: int) -> dict:
    return {"cpu": {"guest": n}, "memory": {"guest": "1Gi"}}


def test_e5_three_vcpus_default_spread_is_rejected():
    cause = check_spread(it(3), SPREAD)
    assert cause is not None
    assert cause.reason == "FieldValueInvalid"
    assert cause.field == INSTANCETYPE_CPU_GUEST_PATH == "instancetype.spec.cpu.guest"
    assert cause.message == (
        "3 vCPUs provided by the instance type are not divisible by the Spec.PreferSpreadSocketToCoreRatio "
        "or Spec.CPU.PreferSpreadOptions.Ratio of 2 provided by the preference"
    )


def test_one_vcpu_with_spread_is_rejected_too():
    assert check_spread(it(1), SPREAD).message.startswith("1 vCPUs ")


@pytest.mark.parametrize("n", [2, 4, 6, 8])
def test_divisible_counts_pass(n):
    assert check_spread(it(n), SPREAD) is None


def test_deprecated_prefer_spread_alias_is_checked():
    assert check_spread(it(3), {"cpu": {"preferredCPUTopology": "preferSpread"}}) is not None


def test_no_instancetype_or_other_topology_skips_the_check():
    assert check_spread(None, SPREAD) is None
    assert check_spread(it(3), {"cpu": {"preferredCPUTopology": "cores"}}) is None
    assert check_spread(it(3), None) is None


def test_legacy_ratio_then_spread_options_ratio_wins():
    legacy = {"cpu": {"preferredCPUTopology": "spread"}, "preferSpreadSocketToCoreRatio": 4}
    assert check_spread(it(8), legacy) is None
    assert "Ratio of 4" in check_spread(it(6), legacy).message
    both = {"cpu": {"preferredCPUTopology": "spread", "spreadOptions": {"ratio": 3}},
            "preferSpreadSocketToCoreRatio": 4}
    assert check_spread(it(6), both) is None
    assert "Ratio of 3" in check_spread(it(8), both).message


def test_cores_threads_message():
    pref = {"cpu": {"preferredCPUTopology": "spread", "spreadOptions": {"across": "CoresThreads"}}}
    assert check_spread(it(5), pref).message == (
        "5 vCPUs provided by the instance type are not divisible by the number of threads per core 2"
    )


@pytest.mark.parametrize("n,ratio,bad",
                         [(2, 2, True), (4, 2, False), (12, 3, False), (6, 2, True), (36, 4, True), (24, 4, False)])
def test_sockets_cores_threads_needs_even_and_ratio(n, ratio, bad):
    pref = {"cpu": {"preferredCPUTopology": "spread",
                    "spreadOptions": {"across": "SocketsCoresThreads", "ratio": ratio}}}
    cause = check_spread(it(n), pref)
    assert (cause is not None) is bad
    if bad:
        assert cause.message == (
            f"{n} vCPUs provided by the instance type are not divisible by the number of threads per core 2 and "
            f"Spec.PreferSpreadSocketToCoreRatio or Spec.CPU.PreferSpreadOptions.Ratio of {ratio}"
        )


def test_zero_ratio_is_rejected_instead_of_dividing_by_zero():
    pref = {"cpu": {"preferredCPUTopology": "spread", "spreadOptions": {"ratio": 0}}}
    cause = check_spread(it(4), pref)
    assert cause is not None and cause.field == INSTANCETYPE_CPU_GUEST_PATH and "Ratio of 0" in cause.message


def test_unknown_across_is_not_checked():
    pref = {"cpu": {"preferredCPUTopology": "spread", "spreadOptions": {"across": "Nope"}}}
    assert check_spread(it(3), pref) is None


def test_uint32_reads_like_go():
    assert uint32(4) == 4 and uint32(2**32 + 3) == 3 and uint32(-1) == 0xFFFFFFFF and uint32(2.9) == 2
    assert uint32(None) == 0 and uint32("4") == 0 and uint32(True) == 0
    assert instancetype_guest_cpus({"cpu": {"guest": 6}}) == 6
    assert instancetype_guest_cpus(None) == 0 and instancetype_guest_cpus({"cpu": "lots"}) == 0
