"""Instance type IOThreads and their policy (instancetype_webhook.kubevirt.apply.iothreads)."""
from __future__ import annotations

from instancetype_webhook.kubevirt.apply.iothreads import apply_io_threads, apply_io_threads_policy
from tests.kit.kubevirt import BASE, fields


def test_supplemental_pool_count_is_set_beside_other_io_thread_fields():
    domain = {"ioThreads": {"other": 1}}
    assert apply_io_threads(BASE, {"ioThreads": {"supplementalPoolThreadCount": 4}}, domain) == []
    assert domain["ioThreads"] == {"other": 1, "supplementalPoolThreadCount": 4}


def test_a_vm_count_conflicts_even_when_zero():
    domain = {"ioThreads": {"supplementalPoolThreadCount": 0}}
    causes = apply_io_threads(BASE, {"ioThreads": {"supplementalPoolThreadCount": 4}}, domain)
    assert fields(causes) == [f"{BASE}.domain.ioThreads.supplementalPoolThreadCount"]
    assert domain["ioThreads"] == {"supplementalPoolThreadCount": 0}


def test_no_count_in_the_instancetype_changes_nothing():
    domain = {"ioThreads": {"supplementalPoolThreadCount": 2}}
    assert apply_io_threads(BASE, {}, domain) == [] and apply_io_threads(BASE, {"ioThreads": {}}, domain) == []
    assert domain == {"ioThreads": {"supplementalPoolThreadCount": 2}}


def test_policy_is_set_when_the_vm_has_none_and_conflicts_otherwise():
    domain = {}
    assert apply_io_threads_policy(BASE, {"ioThreadsPolicy": "auto"}, domain) == []
    assert domain == {"ioThreadsPolicy": "auto"}
    assert fields(apply_io_threads_policy(BASE, {"ioThreadsPolicy": "shared"}, domain)) == [
        f"{BASE}.domain.ioThreadsPolicy"]
    assert domain == {"ioThreadsPolicy": "auto"}
    assert apply_io_threads_policy(BASE, {}, domain) == []
