"""Polling for a condition that becomes true later (a server's state, a watch, a file): `wait_for`.

The one helper for "eventually": it returns the check's (truthy) value, and on a timeout fails the test with
an AssertionError that names what was awaited, how long, and (optionally) a log to read.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_for(check: Callable[[], T], timeout: float = 10.0, what: str = "the condition", *,
             interval: float = 0.05, logs: Callable[[], str] | None = None) -> T:
    """Call `check` every `interval` seconds until it returns something truthy, and return that.

    After `timeout` seconds, fail with `AssertionError("<what>: not after <timeout> s")` and `logs()` below it.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() >= deadline:
            message = f"{what}: not after {timeout:g} s"
            raise AssertionError(f"{message}\n{logs()}" if logs else message)
        time.sleep(interval)


def timed_wait_for(check: Callable[[], object], timeout: float, what: str = "the condition", *,
                   interval: float = 0.05, logs: Callable[[], str] | None = None) -> float:
    """`wait_for`, returning the seconds it took (for tests that bound how fast something happens)."""
    start = time.monotonic()
    wait_for(check, timeout, what, interval=interval, logs=logs)
    return time.monotonic() - start
