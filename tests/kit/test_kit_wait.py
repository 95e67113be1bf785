"""tests.kit.wait: polling returns the check's value, or fails naming what it waited for."""
from __future__ import annotations

import itertools
import time

import pytest

from tests.kit.wait import timed_wait_for, wait_for


def test_wait_for_returns_the_first_truthy_value():
    calls = itertools.count()
    assert wait_for(lambda: next(calls) >= 3 and "done", 5, interval=0.001) == "done"


def test_wait_for_fails_with_what_and_the_log():
    start = time.monotonic()
    with pytest.raises(AssertionError, match=r"the moon: not after 0.2 s\nthe log"):
        wait_for(lambda: False, 0.2, "the moon", logs=lambda: "the log")
    assert 0.2 <= time.monotonic() - start < 5


def test_timed_wait_for_says_how_long_it_took():
    deadline = time.monotonic() + 0.1
    assert 0.09 <= timed_wait_for(lambda: time.monotonic() >= deadline, 5) < 5
