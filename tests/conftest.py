"""Shared fixtures (the in-tree data, see tests/kit/shared_data.py) and the skip policy.

Skip policy: a test that needs something the machine lacks skips with one line naming what to install
(tests/kit/needs.py). Under CI=true any skip fails the run, with the skipped tests listed.

No leftovers: the threads and child processes a test module starts are gone when it ends (tests/kit/leaks.py).
"""
from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakeapi.apiserver import FakeAPIServer
from tests.kit.leaks import nothing_outlives_its_module  # noqa: F401  (an autouse fixture: threads, children)
from tests.kit.needs import in_ci
from tests.kit.shared_data import SHARED

_SKIPPED: list[tuple[str, str]] = []


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    return SHARED


@pytest.fixture
def fake() -> Iterator[FakeAPIServer]:
    """A fresh strict fake API server (tests/fakeapi), stopped after the test; a module may define its own."""
    server = FakeAPIServer()
    yield server
    server.stop()


def _skip_reason(report) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


def pytest_runtest_logreport(report) -> None:
    if report.skipped and not hasattr(report, "wasxfail"):
        _SKIPPED.append((report.nodeid, _skip_reason(report)))


def pytest_collectreport(report) -> None:
    if report.skipped:
        _SKIPPED.append((report.nodeid, _skip_reason(report)))


def pytest_sessionfinish(session, exitstatus) -> None:
    if in_ci() and _SKIPPED and exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    if in_ci() and _SKIPPED:
        terminalreporter.section("skipped under CI=true: the run fails", sep="=", red=True, bold=True)
        for nodeid, reason in _SKIPPED:
            terminalreporter.line(f"SKIPPED {nodeid}: {reason}")
        terminalreporter.line(f"{len(_SKIPPED)} test(s) skipped; CI must install what they need (.ci/run).")


@pytest.fixture
def app_logging():
    """For a test that runs `serve` (or `logconfig.configure()`) in process: afterwards the app's logger is as it was.
    A handler left bound to the test's captured stdout would take every later log line of the session (the
    watch threads of other tests too) and write it into a stream pytest has closed."""
    from instancetype_webhook.server import reviewlog

    logger = logging.getLogger("instancetype_webhook")
    saved, sink = (logger.handlers[:], logger.level, logger.propagate), reviewlog.sink()
    yield logger
    reviewlog.set_sink(sink)
    logger.handlers[:], logger.level, logger.propagate = saved


@pytest.fixture(autouse=True)
def _no_app_log_handler_left_behind():
    """Fails the test that leaves a handler of `server.logconfig.configure()` on the app's logger (use the
    `app_logging` fixture), and takes it off so that later tests are not affected."""
    logger = logging.getLogger("instancetype_webhook")
    before = logger.handlers[:]
    yield
    added = [h for h in logger.handlers if h not in before and type(h).__name__ == "_OrderedHandler"]
    if added:
        from instancetype_webhook.server import reviewlog

        logger.handlers[:] = before
        logger.propagate = True
        reviewlog.set_sink(None)
        pytest.fail("the test left logconfig.configure()'s handler on the app's logger: use the app_logging fixture")


def pytest_collection_modifyitems(config, items):
    """`ci_tier` tests (the compiled re-run of the suites) run only in `make test-ci` (.ci/run), which sets
    INSTANCETYPE_WEBHOOK_CI_TIER=1 and selects them; `make test` leaves them out (deselected, not skipped)."""
    if os.environ.get("INSTANCETYPE_WEBHOOK_CI_TIER") == "1":
        return
    kept = [item for item in items if item.get_closest_marker("ci_tier") is None]
    if len(kept) != len(items):
        config.hook.pytest_deselected(items=[item for item in items if item not in kept])
        items[:] = kept
